// Browser tests of the web view: headless Debian chromium driven by playwright-core
// against a real server (fleetmark-coordinator with --http_address, or
// web_test_server) over a fresh PostgreSQL database seeded by web_seed through the
// coordinator's Store. Saves a screenshot of every page under FLEETMARK_SCREENSHOTS.
//
// Environment (set by tests/web/CMakeLists.txt): FLEETMARK_TEST_PG_URI,
// FLEETMARK_TEST_REQUIRE_PG, FLEETMARK_WEB_SERVER(_KIND), FLEETMARK_WEB_SEED,
// FLEETMARK_NODE_MODULES, FLEETMARK_SCREENSHOTS. Exits 77 (skipped) without a
// database unless FLEETMARK_TEST_REQUIRE_PG=1.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdirSync, mkdtempSync, rmSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {after, before, test} from 'node:test';
import {psql, startWebServer, stopWebServer, testPgUriOrExit} from './web_process.mjs';

const env = process.env;
const pgUri = testPgUriOrExit();
const require = createRequire(join(env.FLEETMARK_NODE_MODULES, 'noop.js'));
const {chromium} = require('playwright-core');
const shots = env.FLEETMARK_SCREENSHOTS;
mkdirSync(shots, {recursive: true});

const kUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const dbName = `fleetmark_web_${process.pid}_${Date.now()}`;
const dbUri = (() => {
  const u = new URL(pgUri);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

let server;
let baseUrl;
let context;
let manifest;
const userDataDir = mkdtempSync(join(tmpdir(), 'fleetmark-chromium-'));

async function startServer() {
  const args = env.FLEETMARK_WEB_SERVER_KIND === 'coordinator' ?
    [`--database_uri=${dbUri}`, '--listen_address=127.0.0.1:0', '--http_address=127.0.0.1:0'] :
    [`--database_uri=${dbUri}`, '--http_address=127.0.0.1:0'];
  ({server, baseUrl} = await startWebServer(env.FLEETMARK_WEB_SERVER, args, {echo: true}));
}

before(async () => {
  psql(pgUri, `CREATE DATABASE ${dbName}`);
  // With a laptop's results file imported (`results import`): an imported run and device record.
  const seeded = spawnSync(env.FLEETMARK_WEB_SEED, [`--database_uri=${dbUri}`, '--import_laptop'], {encoding: 'utf8'});
  assert.equal(seeded.status, 0, `web_seed failed: ${seeded.stderr}`);
  manifest = JSON.parse(seeded.stdout);
  // Spread the nightly runs over the last two weeks (the store stamps them "now").
  const updates = manifest.nightly.map((n) => {
    assert.match(n.run_id, kUuid);
    return `UPDATE runs SET created_at = now() - interval '${Number(n.days_ago)} days' WHERE run_id = '${n.run_id}';`;
  });
  psql(dbUri, updates.join('\n'));
  await startServer();
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: {width: 1400, height: 900},
  });
});

after(async () => {
  if (context) await context.close();
  await stopWebServer(server);
  rmSync(userDataDir, {recursive: true, force: true});
  try {
    psql(pgUri, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  } catch (e) {
    console.error(String(e));
  }
});

// Opens `path`, waits for the page to finish rendering, and returns the page plus the
// console errors and dialogs it produced.
async function open(path, {allow404 = false} = {}) {
  const page = await context.newPage();
  const errors = [];
  const dialogs = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    if (allow404 && /status of 404/.test(msg.text())) return;
    errors.push(msg.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const response = await page.goto(baseUrl + path);
  await page.waitForSelector('body[data-ready="1"]', {timeout: 30000});
  await page.waitForTimeout(300);  // let charts finish their first frame
  return {page, errors, dialogs, response};
}

async function shot(page, name) {
  await page.screenshot({path: join(shots, `${name}.png`), fullPage: true});
}

const agentId = (name) => manifest.agents.find((a) => a.name === name).agent_id;

test('fleet page lists every agent, hostile strings as text', async () => {
  const {page, errors, dialogs} = await open('/fleet');
  assert.deepEqual(errors, []);
  const rows = await page.locator('#fleet-table tbody tr').count();
  assert.equal(rows, manifest.agents.length + 1, 'the agents and the imported laptop');
  const text = await page.locator('#fleet-table').innerText();
  assert.ok(text.includes(manifest.hostile_name), 'hostile device name shown verbatim');
  assert.ok(text.includes('<script>alert(2)</script>'), 'hostile label shown verbatim');
  // Issue 32: a zero-width space showed raw; the page escapes it as the CLI does.
  assert.ok(text.includes('zero\\u200bwidth'), `zero-width space escaped: ${text}`);
  assert.ok(!text.includes('\u200b'), 'no raw zero-width space');
  assert.ok(text.includes('Intel(R) Core(TM) i7-12700H'));
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was injected');
  assert.equal(await page.locator('main script').count(), 0, 'no <script> element was injected');
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, [], 'no alert() ran');
  // Fleet health: the host's calibration drifted on the last night (quarantined, with
  // since and why); the phone has a noise score and is ok; the board has no score yet.
  const quarantined = page.locator(`#fleet-table tr[data-agent="${agentId(manifest.quarantined_agent)}"]`);
  assert.equal(await quarantined.getAttribute('data-health'), 'quarantined');
  const healthText = await quarantined.locator('td.health').innerText();
  assert.ok(healthText.includes('quarantined'), healthText);
  assert.ok(/since \d{4}-\d{2}-\d{2}/.test(healthText), `since shown: ${healthText}`);
  assert.ok(healthText.includes('calibration drift: the newest night is'), healthText);
  assert.ok(healthText.includes(`fleetmark agents release ${manifest.quarantined_agent}`), healthText);
  const quiet = page.locator(`#fleet-table tr[data-agent="${agentId(manifest.quiet_agent)}"]`);
  assert.equal(await quiet.getAttribute('data-health'), 'ok');
  assert.ok(/^\d+\.\d %/.test(await quiet.locator('td.noise').innerText()), 'noise score in percent');
  // The phone's kernel update at night 10 starts its calibration history over: 4 nights.
  assert.ok((await quiet.locator('td.noise').innerText()).includes('4 nights'));
  const board = page.locator(`#fleet-table tr[data-agent="${agentId(manifest.hostile_name)}"]`);
  assert.equal((await board.locator('td.noise').innerText()).trim(), '–');
  // The host runs in a cpuset of its P-cores: its E-core class has no allowed CPU and is
  // "not available here" with the machine's count, not "efficiency: 0 × 1T".
  const classes = await page.locator(`#fleet-table tr[data-agent="${agentId('x86-host')}"] td.core-classes`)
    .innerText();
  assert.ok(classes.includes('performance: 6 × 2T IntelCore @ 4.70 GHz'), classes);
  assert.ok(classes.includes('efficiency: not available here (8 machine CPUs, none allowed)'), classes);
  assert.ok(!/\b0 × /.test(await page.locator('#fleet-table').innerText()), 'no class shown as 0 × …');
  assert.ok((await page.locator('main').innerText()).includes('1 quarantined'));
  await shot(page, 'fleet');
  await page.close();
});

test('runs page shows status, progress and submitter', async () => {
  const {page, errors} = await open('/runs');
  assert.deepEqual(errors, []);
  const rows = page.locator('#runs-table tbody tr');
  assert.equal(await rows.count(), 4 + manifest.nightly.length + 4 + 1);  // + the imported laptop's run
  const live = await page.locator(`tr[data-run="${manifest.live_run_id}"]`).innerText();
  assert.match(live, /running/);
  assert.match(live, /3\/9/);  // the seed: 3 results of 3 x 3 cases (web_seed.cc)
  const nightly = await page.locator(`tr[data-run="${manifest.nightly[0].run_id}"]`).innerText();
  assert.match(nightly, /schedule:nightly/);
  // The schedules: each one's state (paused or active) and case filter.
  const schedules = Object.fromEntries((await page.locator('#schedules-table tbody tr').allInnerTexts())
    .map((row) => row.split('\t')).map(([name, ...cells]) => [name, cells]));
  assert.deepEqual(Object.keys(schedules), ['weekly-fanout', 'yearly-s1']);
  assert.equal(schedules['weekly-fanout'][0], 'paused');
  assert.equal(schedules['weekly-fanout'][4], '^fanout/');
  assert.match(schedules['weekly-fanout'][2], /s4-fanout/);
  assert.equal(schedules['yearly-s1'][0], 'active');
  assert.equal(schedules['yearly-s1'][4], 'every case');
  // The selector as `schedules list` shows it; the last fire's run a link to its page.
  assert.equal(schedules['yearly-s1'][3], '(all online)');
  assert.equal(schedules['weekly-fanout'][3], 'arch=aarch64');
  const fired = page.locator('tr[data-schedule="yearly-s1"] td.last-fire a');
  assert.equal(await fired.getAttribute('href'), `/runs/${manifest.yearly_fire_run_id}`);
  assert.equal(await fired.innerText(), manifest.yearly_fire_run_id.slice(0, 8));
  // Small-font cells sit on the row's text baseline, as the rest of the row.
  const baselines = await page.evaluate(() => [...document.querySelectorAll('#runs-table tbody tr:first-child td, ' +
    '#schedules-table tbody tr td')].map((td) => getComputedStyle(td).verticalAlign));
  assert.deepEqual([...new Set(baselines)], ['baseline']);
  const tops = await page.evaluate(() => {
    const row = document.querySelector('tr[data-schedule="yearly-s1"]');
    const top = (el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const rect = range.getClientRects()[0];
      return rect.bottom;
    };
    return [...row.querySelectorAll('td')].map(top);
  });
  // Text bottoms within 3 px of each other: a 12 px cell's text on the 14 px text's line.
  assert.ok(Math.max(...tops) - Math.min(...tops) <= 3, `text bottoms ${tops.join(', ')}`);
  await shot(page, 'runs');
  await page.close();
});

// Issue 34: a run stored by `fleetmark results import` (web_seed --import_laptop) is
// labelled imported on the Runs and Run pages, and its device record is counted on the
// Fleet page as an imported device, not as an agent.
test('an imported run is labelled on Runs and Run, its device counted apart on Fleet', async () => {
  const importedRun = manifest.imported_run_id;
  assert.match(importedRun, kUuid);
  const importedLabel = (scope) => scope.locator('span.label', {hasText: /^imported$/});
  const runs = await open('/runs');
  assert.deepEqual(runs.errors, []);
  assert.equal(await importedLabel(runs.page.locator(`#runs-table tr[data-run="${importedRun}"]`)).count(), 1);
  assert.equal(await importedLabel(runs.page.locator('#runs-table')).count(), 1, 'only the imported run');
  await runs.page.close();

  const run = await open(`/runs/${importedRun}`);
  assert.deepEqual(run.errors, []);
  const header = run.page.locator('main h1 + p');
  assert.equal(await importedLabel(header).count(), 1);
  assert.match(await importedLabel(header).getAttribute('title'), /fleetmark results import/);
  assert.match(await header.innerText(), /submitted by import:alice/);
  await run.page.close();
  const study = await open(`/runs/${manifest.study_run_id}`);
  assert.equal(await importedLabel(study.page.locator('main h1 + p')).count(), 0, 'a fleet run has no label');
  await study.page.close();

  const fleet = await open('/fleet');
  assert.deepEqual(fleet.errors, []);
  const device = manifest.imported_device;
  assert.equal(device.name, 'dev-laptop-imported');
  const row = fleet.page.locator(`#fleet-table tr[data-agent="${device.agent_id}"]`);
  assert.ok((await row.locator('td.name').innerText()).includes(device.name));
  const state = row.locator('span.state');
  assert.equal(await state.innerText(), 'imported');
  assert.match(await state.getAttribute('class'), /\bimported\b/);
  assert.doesNotMatch(await state.getAttribute('class'), /\boffline\b/, 'not styled as an offline agent');
  // The summary: the seeded agents only, then the imported device; each row counted once.
  const summary = await fleet.page.locator('#fleet-summary').innerText();
  const counted = summary.match(/^(\d+) agents?, (\d+) online.* · (\d+) imported devices?\.$/);
  assert.ok(counted, summary);
  assert.equal(Number(counted[1]), manifest.agents.length, summary);
  assert.equal(Number(counted[3]), 1, summary);
  assert.equal(Number(counted[1]) + Number(counted[3]), await fleet.page.locator('#fleet-table tbody tr').count());
  await shot(fleet.page, 'fleet-imported');
  await fleet.page.close();
});

test('run page draws one bar per strategy, sorted by median, per device', async () => {
  const {page, errors, dialogs} = await open(`/runs/${manifest.study_run_id}`);
  assert.deepEqual(errors, []);
  const charts = await page.evaluate(() => [...document.querySelectorAll('[data-chart="bars"]')].map((el) => {
    const chart = window.fleetmark.chartOf(el);
    const data = chart.getModel().getSeriesByIndex(0).getData();
    const drawn = [];
    for (let i = 0; i < data.count(); i++) {
      const layout = data.getItemLayout(i);
      drawn.push({name: data.getName(i), y: layout.y, width: layout.width, el: !!data.getItemGraphicEl(i)});
    }
    const axis = chart.getOption().xAxis[0];
    return {agent: el.dataset.agent, group: el.dataset.group, drawn, scale: el.dataset.axis, type: axis.type,
      min: axis.min, max: axis.max};
  }));
  // 3 workloads × 3 devices.
  assert.equal(charts.length, 9);
  // One value axis per group for all its devices (issue 34: each had its own linear axis,
  // so µs bars vanished next to ms ones), log when the group's values span 10x or more.
  const byGroup = new Map();
  for (const c of charts) byGroup.set(c.group, [...(byGroup.get(c.group) || []), c]);
  for (const [group, cs] of byGroup) {
    assert.equal(cs.length, 3, group);
    for (const c of cs) {
      assert.deepEqual([c.scale, c.type, c.min, c.max], [cs[0].scale, cs[0].type, cs[0].min, cs[0].max], `${group}: one axis`);
      assert.equal(c.type, c.scale === 'log' ? 'log' : 'value');
      assert.ok(Number.isFinite(c.max) && c.max > 0, `${group}: a shared maximum`);
    }
    const medians = Object.values(manifest.medians).flatMap((m) => Object.values(m))
      .filter((m) => m.workload === group.split('/')[1]).map((m) => m.median_ns);
    const span = Math.max(...medians) / Math.min(...medians);
    if (span >= 12) assert.equal(cs[0].scale, 'log', `${group}: medians span ${span.toFixed(1)}x`);
    if (span < 8) assert.equal(cs[0].scale, 'linear', `${group}: medians span ${span.toFixed(1)}x`);
  }
  for (const c of charts) {
    const workload = c.group.split('/')[1];
    const expected = Object.values(manifest.medians[c.agent])
      .filter((m) => m.workload === workload)
      .sort((a, b) => a.median_ns - b.median_ns);
    assert.equal(c.drawn.length, expected.length, `${c.group} ${c.agent}: one bar per strategy`);
    assert.deepEqual(c.drawn.map((d) => d.name), expected.map((m) => m.strategy), `${c.group}: order by median`);
    for (let i = 0; i < c.drawn.length; i++) {
      assert.ok(c.drawn[i].el && c.drawn[i].width > 0, 'bar drawn');
      if (i > 0) assert.ok(c.drawn[i].y > c.drawn[i - 1].y, 'fastest on top');
    }
  }
  const headings = await page.locator('.panel h3').allInnerTexts();
  assert.ok(headings.includes(manifest.hostile_name), 'hostile name as a panel heading, as text');
  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(dialogs, []);
  await shot(page, 'run');

  // Raw samples on demand: the URL carries the choice.
  await page.locator('table.metrics button', {hasText: 'distribution'}).first().click();
  await page.waitForSelector('[data-chart="distribution"]');
  await page.waitForSelector('body[data-ready="1"]');
  await page.waitForTimeout(300);
  assert.match(page.url(), /samples=[0-9a-f-]{36}/);
  const points = await page.evaluate(() => {
    const chart = window.fleetmark.chartOf(document.querySelector('[data-chart="distribution"]'));
    return chart.getModel().getSeriesByIndex(1).getData().count();
  });
  assert.equal(points, 40);
  // The stored conditions at the case's start and end (seeded: 6000 → 5900 MiB free).
  const conditions = Object.fromEntries((await page.locator('#conditions-table tbody tr').allInnerTexts())
    .map((row) => row.split('\t')).map(([name, ...values]) => [name, values]));
  assert.deepEqual(conditions['free memory'], ['6000 MiB', '5900 MiB']);
  assert.deepEqual(conditions['battery'], ['80 % charging', '79 % charging']);
  assert.deepEqual(conditions['load average (1 min)'], ['0.50', '0.75']);
  assert.deepEqual(conditions['other processes\' CPU'], ['–', '–']);
  // Issue 32, item 11: a gate without a reading is shown as not checked, not as passed.
  assert.deepEqual(conditions['failed gates'], ['–', '–']);
  assert.deepEqual(conditions['gates not checked'],
    ['temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked', '–']);
  assert.deepEqual(errors, []);
  await shot(page, 'run-samples');
  await page.close();
});

test('run page: an unsupported case shows "–", not "0 – 0" or 0', async () => {
  const {page, errors} = await open(`/runs/${manifest.live_run_id}`);
  assert.deepEqual(errors, []);
  const row = page.locator(`table.metrics tr[data-result="${manifest.unsupported_result_id}"]`);
  const cells = await row.locator('td').allInnerTexts();
  const headers = await page.locator('table.metrics').first().locator('thead th').allInnerTexts();
  const cell = (name) => cells[headers.indexOf(name)];
  assert.match(cell('status'), /unsupported: no suspending wait/);
  for (const name of ['median', '95% CI', '±%', 'samples', 'min – max', 'mean', 'stddev', 'MAD', 'n', 'outliers',
    'CPU/rep', 'allocations', 'peak threads', 'RSS delta']) {
    assert.equal(cell(name), '–', `${name}: ${cells.join(' | ')}`);
  }
  // The measured rows of the same run keep their numbers.
  const measured = await page.locator('table.metrics tbody tr').first().locator('td').allInnerTexts();
  assert.match(measured[headers.indexOf('median')], /µs|ms/);
  // The CLI's values: CPU per repetition auto-scaled (the seed: 1.1 × the median), not seconds.
  assert.match(measured[headers.indexOf('CPU/rep')], /^[0-9.]+ (µs|ms)$/);
  await page.close();
});

test('run page: fan-out rows show the scenario\'s own metrics, as the CLI', async () => {
  const {page, errors} = await open(`/runs/${manifest.fanout_run_id}`);
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('table.metrics:not(.fanout)').count(), 0, 'not a timed batch table');
  const headers = await page.locator('table.fanout thead th').allInnerTexts();
  assert.ok(!headers.includes('median') && !headers.includes('stopped by'), headers.join(' | '));
  const row = async (id) => {
    const cells = await page.locator(`table.fanout tr[data-result="${id}"] td`).allInnerTexts();
    return (name) => cells[headers.indexOf(name)];
  };
  const [fiber, pool, exhausted] = await Promise.all(manifest.fanout_result_ids.map(row));
  assert.equal(pool('threads'), '48 of 100');
  assert.equal(pool('total time'), '4.63 s');
  assert.equal(pool('timeouts'), '12');
  assert.equal(pool('p99'), '3.00 s');
  assert.equal(pool('peak threads'), '104');
  assert.equal(fiber('total time'), '1.51 s');
  assert.equal(fiber('timeouts'), '0');
  assert.match(exhausted('status'), /^resource_exhausted: thread creation failed/);
  for (const name of ['total time', 'ok', 'timeouts', 'p99', 'peak threads']) assert.equal(exhausted(name), '–', name);
  await shot(page, 'run-fanout');
  await page.close();
});

test('run pages by id prefix: a unique one opens the run, an ambiguous one lists the matches', async () => {
  const unique = await open(`/runs/${manifest.study_run_id.slice(0, 8)}`);
  assert.equal(unique.response.status(), 200);
  assert.deepEqual(unique.errors, []);
  assert.match(await unique.page.locator('h1').innerText(), new RegExp(`^Run ${manifest.study_run_id.slice(0, 8)}: `));
  assert.equal(await unique.page.locator('[data-chart="bars"]').count(), 9);
  await unique.page.close();

  const ambiguous = await open(`/runs/${manifest.ambiguous_prefix}`);
  assert.equal(ambiguous.response.status(), 300);
  assert.deepEqual(ambiguous.errors.filter((e) => !/status of 300/.test(e)), []);
  assert.equal(await ambiguous.page.locator('[data-ambiguous]').count(), 1);
  const links = await ambiguous.page.locator('#matches-table tbody a').allInnerTexts();
  assert.deepEqual(links, manifest.ambiguous_run_ids);
  assert.match(await ambiguous.page.locator('h1').innerText(), /matches 2 runs/);
  await shot(ambiguous.page, 'run-ambiguous');
  // A match opens its run.
  await ambiguous.page.locator('#matches-table tbody a').first().click();
  await ambiguous.page.waitForSelector('body[data-ready="1"]');
  assert.match(ambiguous.page.url(), new RegExp(`/runs/${manifest.ambiguous_run_ids[0]}$`));
  await ambiguous.page.close();

  const none = await open('/runs/abcdef0f', {allow404: true});
  assert.equal(none.response.status(), 404);
  assert.equal(await none.page.locator('[data-notfound]').count(), 1);
  assert.match(await none.page.locator('[data-notfound]').innerText(), /no run with id prefix abcdef0f/);
  await none.page.close();
});

test('memory and load scenario views', async () => {
  const memory = await open(`/runs/${manifest.memory_run_id}`);
  assert.deepEqual(memory.errors, []);
  assert.equal(await memory.page.locator('[data-chart="memory"]').count(), 2);
  const legend = await memory.page.evaluate((agent) => window.fleetmark.chartOf(
    document.querySelector(`[data-chart="memory"][data-agent="${agent}"]`)).getOption().series.map((s) => s.name),
  agentId('x86-host'));
  assert.ok(legend.some((n) => /thread_per_task: 64\.0 KiB\/task/.test(n)), legend.join(' | '));
  // A slope fitted on the points that ran names the point left out, as the CLI does.
  const phoneSlope = await memory.page.locator(
    `[data-chart="memory"][data-agent="${agentId('pixel-8')}"] ~ table tr:has(td:text-is("fixed_pool")) td:nth-child(3)`)
    .textContent();
  assert.equal(phoneSlope, '40.30 (without 10000)');
  await shot(memory.page, 'run-memory');
  await memory.page.close();

  const load = await open(`/runs/${manifest.load_run_id}`);
  assert.deepEqual(load.errors, []);
  assert.equal(await load.page.locator('[data-chart="load-latency"]').count(), 1);
  assert.equal(await load.page.locator('[data-chart="load-throughput"]').count(), 1);
  await shot(load.page, 'run-load');
  await load.page.close();
});

test('compare page: winner per cell matches the data', async () => {
  const ids = [agentId('x86-host'), agentId('pixel-8'), agentId(manifest.hostile_name)];
  const runs = ids.map(() => manifest.study_run_id).join(',');
  const {page, errors, dialogs} = await open(`/compare?agents=${ids.join(',')}&runs=${runs}`);
  assert.deepEqual(errors, []);
  const cells = await page.evaluate(() => [...document.querySelectorAll('#compare-table td.cell')].map((td) => ({
    strategy: td.dataset.strategy, workload: td.dataset.workload, winner: td.dataset.winner, text: td.innerText})));
  assert.equal(cells.length, 18);
  let noDifference = 0;
  for (const cell of cells) {
    const caseId = `batch/${cell.workload.split('/')[1]}/blocking/${cell.strategy}/any`;
    const values = ids.map((id) => ({id, ...manifest.medians[id][caseId]})).sort((a, b) => a.median_ns - b.median_ns);
    const [best, second] = values;
    const overlap = best.ci_high_ns >= second.ci_low_ns && second.ci_high_ns >= best.ci_low_ns;
    const expected = overlap ? 'none' : best.id;
    assert.equal(cell.winner, expected, `${caseId}: winner`);
    if (overlap) {
      noDifference += 1;
      // The seeded devices drift alike, which pairing cancels: 1.005x is inside the 2 % margin.
      assert.match(cell.text, /equivalent/);
    }
  }
  assert.equal(noDifference, 1, 'the seeded 1.005x cell shows as equivalent');
  assert.match(await page.locator('tr.geomean').innerText(), /A\/B/);
  assert.equal(await page.locator('ul.overall').count(), 0, 'no geometric mean over unrelated workloads');
  // The answer comes first: per workload and device the best strategy or the tied set.
  const order = await page.evaluate(() => {
    const answers = document.querySelector('#compare-answers');
    const table = document.querySelector('#compare-table');
    return answers && table ? answers.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
  });
  assert.ok(order, 'the answers table precedes the per-cell table');
  const storage = await page.locator('#compare-answers tr[data-point="batch/storage/blocking/any"] td').allInnerTexts();
  assert.equal(storage.length, 3);
  // The seed's processes drift alike for both strategies: the paired interval is the ratio.
  assert.equal(storage[0], 'fixed_pool wins (1.06x [1.06x, 1.06x] over work_stealing)');
  assert.ok(!(await page.locator('main').innerText()).includes('[0.00×'), 'no unbounded interval beside a verdict');
  assert.equal(await page.locator('#compare-answers tbody tr').count(), 3);
  assert.equal(await page.locator('[data-chart="heatmap"]').count(), 3);
  // The fingerprint fields that differ between the three devices, one column each.
  const fingerprint = Object.fromEntries((await page.locator('#fingerprint-diff tbody tr').allInnerTexts())
    .map((row) => row.split('\t')).map(([name, ...values]) => [name, values]));
  assert.deepEqual(fingerprint['arch'], ['x86_64', 'aarch64', 'aarch64']);
  assert.equal(fingerprint['cpu'][0], 'Intel(R) Core(TM) i7-12700H');
  assert.ok(!('governor' in fingerprint), 'the same governor on all three is not a difference');
  assert.ok((await page.locator('main').innerText()).includes(manifest.hostile_name));
  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(dialogs, []);
  await shot(page, 'compare');
  await page.close();
  // A/B mode: B = work_stealing against A = fixed_pool on storage, on every device.
  const ab = await open(`/compare?agents=${ids.join(',')}&runs=${runs}` +
    '&cases=storage/blocking/fixed_pool,storage/blocking/work_stealing');
  assert.deepEqual(ab.errors, []);
  const verdicts = await ab.page.evaluate(() => [...document.querySelectorAll('#compare-ab tbody tr')].map((tr) => tr.dataset.verdict));
  assert.deepEqual(verdicts, ['slower', 'slower', 'slower']);
  assert.match(await ab.page.locator('#compare-ab .fleet-ab').innerText(), /slower on 3, equivalent on 0, undecided on 0; geometric-mean B\/A 1\.06×/);
  assert.equal(await ab.page.locator('#case-a').inputValue(), 'storage/blocking/fixed_pool');
  // The controls: "No A/B" leaves the mode; A/B and the minimum margin set from the form.
  await ab.page.click('#compare-clear-ab');
  await ab.page.waitForFunction(() => !document.querySelector('#compare-ab') && !location.search.includes('cases='));
  await ab.page.fill('#case-a', 'storage/blocking/fixed_pool');
  await ab.page.fill('#case-b', 'storage/blocking/work_stealing');
  await ab.page.fill('#min-margin', '10');
  await ab.page.click('#compare-apply');
  await ab.page.waitForSelector('#compare-ab tbody tr');
  const search = new URLSearchParams(await ab.page.evaluate(() => location.search));
  assert.equal(search.get('cases'), 'storage/blocking/fixed_pool,storage/blocking/work_stealing');
  assert.equal(search.get('min_margin'), '0.1');
  // A 10 % minimum: the 6.1 % storage winner is equivalent now, on the answers table too.
  await ab.page.waitForFunction(() => /10\.0%/.test(document.querySelector('main').innerText));
  const storageAt10 = await ab.page.locator('#compare-answers tr[data-point="batch/storage/blocking/any"] td').first().innerText();
  assert.match(storageAt10, /^equivalent within 10\.0 %: fixed_pool, work_stealing/);
  assert.deepEqual(ab.errors, []);
  await ab.page.close();
  // A bad A/B is said under the form, naming the query parameter (not the CLI's --cases);
  // the form keeps what was typed and the rest of the page is answered.
  const bad = await open(`/compare?agents=${ids.join(',')}&runs=${runs}&cases=fixed_pool,work_stealing`);
  assert.deepEqual(bad.errors.filter((e) => !/status of 400/.test(e)), []);
  const said = await bad.page.locator('#compare-ab-error').innerText();
  assert.match(said, /^A\/B: cases: "fixed_pool" matches 3 cases/);
  assert.ok(!said.includes('--cases'), said);
  assert.equal(await bad.page.locator('#case-a').inputValue(), 'fixed_pool');
  assert.equal(await bad.page.locator('#case-b').inputValue(), 'work_stealing');
  assert.equal(await bad.page.locator('#compare-ab').count(), 0);
  assert.ok(await bad.page.locator('#compare-answers').count() > 0, 'the answers are still shown');
  await bad.page.close();
});

test('map page draws each device\'s strategy map and the crossover across devices', async () => {
  const ids = [agentId('x86-host'), agentId('pixel-8')];
  const runs = ids.map(() => manifest.sweep_run_id).join(',');
  const {page, errors, dialogs} = await open(`/map?agents=${ids.join(',')}&runs=${runs}`);
  assert.deepEqual(errors, []);
  const maps = page.locator('[data-chart="strategy-map"]');
  assert.equal(await maps.count(), 2, 'one heatmap per device for the one swept group');
  // The cells as drawn: winner, tie and ratio per point, from the chart's own data.
  const cells = await page.evaluate(() => [...document.querySelectorAll('[data-chart="strategy-map"]')].map((el) => {
    const chart = window.fleetmark.chartOf(el);
    const data = chart.getOption().series[0].data;
    return {agent: el.dataset.agent, group: el.dataset.group, points: data.map((d) => ({
      wait: d.raw.point.wait_us, winner: d.raw.winner, tie: d.raw.tie, ratio: d.raw.ratio,
      colour: d.itemStyle.color, decal: Boolean(d.itemStyle.decal)}))};
  }));
  assert.equal(cells[0].agent, ids[0]);
  assert.equal(cells[0].group, 'batch/synthetic[cpu_ns=1000]/blocking/any');
  assert.deepEqual(cells[0].points.map((p) => p.winner),
    ['fixed_pool_cpu', 'fixed_pool_cpu', 'fixed_pool_io', 'fixed_pool_io']);
  assert.deepEqual(cells[1].points.map((p) => p.tie), [true, false, false, false], 'the phone ties at 10 us');
  assert.ok(cells[1].points[0].decal, 'a tie is hatched');
  assert.ok(!cells[0].points[0].decal);
  assert.notEqual(cells[0].points[0].colour, cells[0].points[2].colour, 'winner by colour');
  assert.equal(cells[0].points[0].colour, cells[1].points[1].colour, 'one colour per strategy on the page');
  // Hover: winner, runner-up, ratio and CI.
  const tooltip = await page.evaluate(() => {
    const el = document.querySelector('[data-chart="strategy-map"]');
    const chart = window.fleetmark.chartOf(el);
    const option = chart.getOption();
    return option.tooltip[0].formatter({data: option.series[0].data[0]});
  });
  assert.match(tooltip, /fixed_pool_cpu wins/);
  assert.match(tooltip, /runner-up fixed_pool_io/);
  // 1.50x in every round, the seed's drift shared by both: the interval is the ratio itself.
  assert.match(tooltip, /paired ratio 1\.50× \[1\.50×–1\.50×\]/);
  // The crossover across devices: the host's interval 100..1000, the phone's 1000..10000.
  assert.equal(await page.locator('[data-chart="crossover"]').count(), 1);
  const sentence = await page.locator('.crossover-sentence').innerText();
  // The estimates: where the two medians cross, on a log scale, between the bracketing points.
  assert.match(sentence, /fixed_pool_io overtakes fixed_pool_cpu at ~215 wait_us on x86-host, ~1,585 wait_us on pixel-8/);
  const intervals = await page.evaluate(() => {
    const chart = window.fleetmark.chartOf(document.querySelector('[data-chart="crossover"]'));
    return chart.getOption().series[0].data.map((d) => d.value.slice(0, 2));
  });
  assert.deepEqual(intervals, [[100, 1000], [1000, 10000]]);
  assert.match(await page.locator('#map-legend').innerText(), /no decided winner/);
  // The legend wraps inside the page, also on a narrow window (it overflowed).
  await page.setViewportSize({width: 420, height: 900});
  await page.waitForTimeout(200);
  const legendBox = await page.evaluate(() => {
    const el = document.getElementById('map-legend');
    return {scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right};
  });
  assert.ok(legendBox.scroll <= legendBox.client + 1, `legend overflows: ${JSON.stringify(legendBox)}`);
  assert.ok(legendBox.right <= 420, `legend beyond the window: ${JSON.stringify(legendBox)}`);
  await page.setViewportSize({width: 1400, height: 900});
  assert.ok(!(await page.locator('main').innerText()).includes('[0.00×'), 'no unbounded interval beside a verdict');
  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(dialogs, []);
  await shot(page, 'map');
  await page.close();
});

// Agent names and ids, full run ids and their 8-character prefixes (what the pages show)
// name the same devices and runs on every page: the same data, the same boxes ticked.
test('compare, map and history take agent names and run id prefixes', async () => {
  const names = ['x86-host', 'pixel-8'];
  const ids = names.map(agentId);
  const run = manifest.sweep_run_id;
  const ticked = (page) => page.evaluate(() => [...document.querySelectorAll('.picker input[type="checkbox"]')]
    .filter((box) => box.checked).map((box) => box.closest('label').textContent));
  for (const kind of ['map', 'compare']) {
    const byId = await open(`/${kind}?agents=${ids.join(',')}&runs=${run},${run}`);
    const byName = await open(`/${kind}?agents=${names.join(',')}&runs=${run.slice(0, 8)},${run.slice(0, 8)}`);
    assert.deepEqual(byName.errors, [], kind);
    const labels = await ticked(byName.page);
    assert.equal(labels.length, 2, `${kind}: ${labels}`);
    assert.ok(labels[0].includes('x86-host') && labels[1].includes('pixel-8'), `${kind}: ${labels}`);
    assert.deepEqual(labels, await ticked(byId.page), kind);
    // The run selects show the run the prefix names.
    const selected = await byName.page.evaluate(() => [...document.querySelectorAll('.picker select')]
      .filter((s) => !s.disabled).map((s) => s.value));
    assert.deepEqual(selected, [run, run], kind);
    const content = (p) => p.locator('main, #app').first().innerText();
    assert.equal(await content(byName.page), await content(byId.page), `${kind}: the same page`);
    await byId.page.close();
    await byName.page.close();
  }
  const caseId = encodeURIComponent(manifest.history_case_id);
  const history = await open(`/history?agents=${names.join(',')}&case=${caseId}&nightly=1`);
  assert.deepEqual(history.errors, []);
  assert.equal((await ticked(history.page)).length, 2);
  const points = await history.page.evaluate(() => window.fleetmark.chartOf(
    document.querySelector('[data-chart="history"]')).getOption().series.filter((s) => s.type === 'line')
    .map((s) => s.data.length));
  assert.deepEqual(points, [14, 14], 'names give the same series as ids');
  await history.page.close();
});

test('history page marks the seeded change point', async () => {
  const ids = [agentId('x86-host'), agentId('pixel-8')];
  const caseId = encodeURIComponent(manifest.history_case_id);
  const {page, errors} = await open(`/history?agents=${ids.join(',')}&case=${caseId}&nightly=1`);
  assert.deepEqual(errors, []);
  const series = await page.evaluate(() => window.fleetmark.chartOf(
    document.querySelector('[data-chart="history"]')).getOption().series.filter((s) => s.type === 'line')
    .map((s) => ({name: s.name, points: s.data.length, changes: s.markPoint.data.length})));
  assert.deepEqual(series.map((s) => s.points), [14, 14]);
  assert.deepEqual(series.map((s) => s.changes), [1, 0], 'one change on the host, none on the phone');
  const changes = await page.locator('#changes-table tbody tr').allInnerTexts();
  assert.equal(changes.length, 1);
  assert.match(changes[0], /x86-host/);
  // The phone's kernel update is a device event (a dashed line), not a detected change.
  const events = await page.locator('#fingerprint-events tbody tr').allInnerTexts();
  assert.equal(events.length, 1);
  assert.match(events[0], /pixel-8/);
  assert.ok(events[0].includes(manifest.fingerprint_change_text), events[0]);
  const lines = await page.evaluate(() => window.fleetmark.chartOf(
    document.querySelector('[data-chart="history"]')).getOption().series.filter((s) => s.type === 'line')
    .map((s) => s.markLine.data.length));
  assert.deepEqual(lines, [0, 1]);
  // The case list holds every case with history for the chosen devices, not only the
  // newest run's (the nightly runs measure two cases).
  const options = await page.locator('.controls select option').allInnerTexts();
  for (const id of ['memory/network/blocking/thread_per_task/any', 'batch/arithmetic/blocking/direct/any',
    'load/-/-/coroutine/any/users=1000']) {
    assert.ok(options.includes(id), `${id} in ${options.join(' | ')}`);
  }
  await shot(page, 'history');
  await page.close();
});

test('missing or malformed ids give 404, not a crash', async () => {
  const missing = await open('/runs/00000000-0000-4000-8000-000000000000', {allow404: true});
  assert.equal(missing.response.status(), 404);
  assert.equal(await missing.page.locator('[data-notfound]').count(), 1);
  assert.deepEqual(missing.errors, []);
  await shot(missing.page, 'not-found');
  await missing.page.close();

  for (const path of ["/runs/not-a-uuid", "/runs/1'%20OR%20'1'='1", '/no/such/page']) {
    const r = await fetch(baseUrl + path);
    assert.equal(r.status, 404, path);
  }
  // A malformed run id is 400 in the API (as in the CLI: a full id or a unique prefix of
  // at least 6 hex digits); the page of one is 404 (above).
  {
    const r = await fetch(`${baseUrl}/api/v1/runs/not-a-uuid`);
    assert.equal(r.status, 400, 'api runs/not-a-uuid');
  }
  for (const path of ['runs/00000000-0000-4000-8000-000000000000/results',
    "results/x';DROP TABLE runs;--", 'compare?agents=00000000-0000-4000-8000-000000000000', 'nope']) {
    const r = await fetch(`${baseUrl}/api/v1/${path}`);
    assert.equal(r.status, 404, path);
    assert.ok((await r.json()).error);
  }
  const bad = await fetch(`${baseUrl}/api/v1/runs?limit=0`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /limit/);
  const runs = await (await fetch(`${baseUrl}/api/v1/runs?limit=100`)).json();
  assert.equal(runs.runs.length, 4 + manifest.nightly.length + 4 + 1, 'tables intact');
});

// The Recommend page (issue 31): a profile form -> per device the answer of
// /api/v1/recommend (the code of `fleetmark recommend --format json`), the measured
// points around the profile with their verdict kind, and the conditions; bad input is
// answered under the form, which keeps what was typed.
test('recommend page: the form answers per device with the verdict kind; bad input inline, form kept', async () => {
  const sweep = manifest.sweep_run_id;
  const {page, errors} = await open('/recommend');
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('#nav a.active').innerText(), 'Recommend');
  assert.equal(await page.locator('.recommend-device').count(), 0, 'no answer before a question');
  const ask = async (cpu, wait, other, state) => {
    await page.fill('#profile-cpu', cpu);
    await page.fill('#profile-wait', wait);
    await page.fill('#profile-other', other);
    await page.selectOption('#recommend-source', `run:${sweep}`);
    await page.evaluate(() => { document.querySelector('#recommend-result').dataset.state = ''; });
    await page.click('#recommend-submit');
    await page.waitForSelector(`#recommend-result[data-state="${state}"]`);
  };
  // 500 us: the phone's CPU-sized pool is decided fastest at 100 and 1000 us; the host's
  // winner changes between them.
  await ask('1', '500', '', 'answer');
  const devices = await page.locator('.recommend-device').evaluateAll((els) => els.map((el) => el.dataset.device));
  assert.deepEqual(devices, ['pixel-8', 'x86-host']);
  const phone = page.locator('.recommend-device[data-device="pixel-8"]');
  assert.match(await phone.locator('.sentence').innerText(), /^Use fixed_pool_cpu: \d\.\d\dx \[\d\.\d\dx, \d\.\d\dx\] faster than /);
  assert.equal(await phone.locator('.recommend-answer').getAttribute('data-verdict'), 'winner');
  const kinds = await phone.locator('table.recommend-points tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  assert.deepEqual(kinds, ['decided', 'decided']);
  const phoneRows = await phone.locator('table.recommend-points tbody tr').allInnerTexts();
  assert.match(phoneRows[0], /wait_us=100/);
  assert.match(phoneRows[0], /\d\.\d\d× \[\d\.\d\d×–\d\.\d\d×\]/, 'the paired ratio with its interval');
  assert.match(phoneRows[0], /\d\.\d %/, 'the margin');
  assert.equal(await page.locator('.recommend-device[data-device="x86-host"] .recommend-answer').getAttribute('data-verdict'),
    'crossover');
  assert.match(await phone.locator('.conditions').innerText(), /no contended case; full mode/);
  assert.ok(!(await page.locator('main').innerText()).includes('[0.00×'), 'no unbounded interval beside a verdict');
  assert.match(page.url(), /profile=cpu_us%3D1%2Cwait_us%3D500/);
  await shot(page, 'recommend');
  // 5000 us: the host's 10000 us point rests on a contended case: undecided, and said so.
  await ask('1', '5000', '', 'answer');
  const host = page.locator('.recommend-device[data-device="x86-host"]');
  assert.equal(await host.locator('.recommend-answer').getAttribute('data-verdict'), 'undecided');
  assert.match(await host.locator('.sentence').innerText(), /contended: direct/);
  const contendedRow = host.locator('table.recommend-points tbody tr[data-contended="1"]');
  assert.equal(await contendedRow.count(), 1);
  assert.match(await contendedRow.innerText(), /wait_us=10,000[\s\S]*undecided[\s\S]*rests on contended cases/);
  assert.match(await contendedRow.locator('[data-contended]').getAttribute('title'), /other processes used 40 % of the CPU/);
  assert.match(await host.locator('.conditions').innerText(), /1 contended case; other processes used up to 40 % of the CPU/);
  // Bad input: the server's message under the form; the form and its values stay.
  await ask('-5', '500', '', 'error');
  assert.match(await page.locator('#recommend-error').innerText(), /^profile: cpu_us: 0 <= cpu_us <= [\d,]+ .*got "-5"/);
  assert.equal(await page.locator('#recommend-form').count(), 1);
  assert.equal(await page.inputValue('#profile-cpu'), '-5');
  assert.equal(await page.locator('.recommend-device').count(), 0, 'no stale answer beside the error');
  await ask('1', '500', 'cpus=2', 'error');
  assert.match(await page.locator('#recommend-error').innerText(), /^profile: unknown key "cpus"; allowed keys: cpu_ns, cpu_us/);
  assert.equal(await page.inputValue('#profile-other'), 'cpus=2');
  assert.deepEqual(errors.filter((e) => !/status of 400/.test(e)), []);
  await shot(page, 'recommend-error');
  await page.close();
  // A link with the profile answers on open, from the newest done run with batch results
  // (the sweep: the nightly runs are older here, the later runs hold no batch result).
  const linked = await open('/recommend?profile=cpu_us%3D1%2Cwait_us%3D500');
  assert.deepEqual(linked.errors, []);
  await linked.page.waitForSelector('#recommend-result[data-state="answer"]');
  assert.match(await linked.page.locator('#recommend-result').innerText(), new RegExp(`From run ${sweep.slice(0, 8)} \\(crossover\\)`));
  assert.equal(await linked.page.inputValue('#profile-wait'), '500');
  await linked.page.close();
});

// One colour per strategy on every page (web/src/strategy_colours.js).
test('a strategy has one colour on the Map, Run, Compare and Recommend pages', async () => {
  const ids = [agentId('x86-host'), agentId('pixel-8')];
  const sweep = manifest.sweep_run_id;
  const map = await open(`/map?agents=${ids.join(',')}&runs=${sweep},${sweep}`);
  const mapColour = await map.page.evaluate(() => {
    const chart = window.fleetmark.chartOf(document.querySelector('[data-chart="strategy-map"]'));
    return chart.getOption().series[0].data.find((d) => d.raw.winner === 'fixed_pool_cpu').itemStyle.color;
  });
  await map.page.close();
  const run = await open(`/runs/${sweep}`);
  const runColours = await run.page.evaluate(() => [...document.querySelectorAll('[data-chart="bars"]')].map((el) => {
    const option = window.fleetmark.chartOf(el).getOption();
    const labels = option.yAxis[0].data;
    return option.series[0].data[labels.indexOf('fixed_pool_cpu')].itemStyle.color;
  }));
  await run.page.close();
  const compare = await open(`/compare?agents=${ids.join(',')}&runs=${sweep},${sweep}`);
  const compareColour = await compare.page.locator('#compare-table th.rowhead .swatch[data-strategy="fixed_pool_cpu"]')
    .getAttribute('style');
  await compare.page.close();
  const recommend = await open(`/recommend?profile=cpu_us%3D1%2Cwait_us%3D500&run=${sweep}`);
  await recommend.page.waitForSelector('#recommend-result[data-state="answer"]');
  const recommendColours = await recommend.page.locator('.swatch[data-strategy="fixed_pool_cpu"]')
    .evaluateAll((els) => els.map((el) => el.getAttribute('style')));
  await recommend.page.close();
  assert.match(mapColour, /^#[0-9a-f]{6}$/);
  assert.equal(runColours.length, 8, 'a bar chart per sweep point and device');
  assert.deepEqual([...new Set(runColours)], [mapColour], 'Run = Map');
  assert.equal(compareColour, `background:${mapColour}`, 'Compare = Map');
  assert.ok(recommendColours.length > 0);
  assert.deepEqual([...new Set(recommendColours)], [`background:${mapColour}`], 'Recommend = Map');
  // Another strategy has another colour.
  const other = await (await open(`/runs/${sweep}`)).page;
  const io = await other.evaluate(() => {
    const option = window.fleetmark.chartOf(document.querySelector('[data-chart="bars"]')).getOption();
    return option.series[0].data[option.yAxis[0].data.indexOf('fixed_pool_io')].itemStyle.color;
  });
  assert.notEqual(io, mapColour);
  await other.close();
});

// The Compare page's heatmaps share one colour scale: the host's fixed_pool/arithmetic
// (study run) and the board's (its live run) are both 10.56x their device's fastest, and
// show in one colour although the host's slowest cell is 71x and the board's 10.56x.
test('compare page: one colour scale for every device\'s heatmap, and the newest shared run by default', async () => {
  const ids = [agentId('x86-host'), agentId(manifest.hostile_name)];
  const {page, errors} = await open(`/compare?agents=${ids.join(',')}&runs=${manifest.study_run_id},${manifest.live_run_id}`);
  assert.deepEqual(errors, []);
  const cells = await page.evaluate(() => [...document.querySelectorAll('[data-chart="heatmap"]')].map((el) => {
    const chart = window.fleetmark.chartOf(el);
    const option = chart.getOption();
    const data = chart.getModel().getSeriesByIndex(0).getData();
    const x = option.xAxis[0].data.findIndex((label) => /arithmetic/.test(label));
    const y = option.yAxis[0].data.indexOf('fixed_pool');
    for (let i = 0; i < data.count(); i++) {
      const [vx, vy, v] = option.series[0].data[i].value;
      if (vx === x && vy === y) return {value: v, fill: data.getItemVisual(i, 'style').fill, max: option.visualMap[0].max};
    }
    return null;
  }));
  assert.equal(cells.length, 2);
  assert.ok(cells[0] && cells[1], JSON.stringify(cells));
  assert.ok(Math.abs(cells[0].value - cells[1].value) < 1e-9, 'the same normalised value');
  assert.equal(cells[0].max, cells[1].max, 'one scale');
  assert.equal(cells[0].fill, cells[1].fill, 'one value, one colour');
  await page.close();
  // No runs given: the newest run both devices hold results in (the study), not each one's newest.
  const shared = await open(`/compare?agents=${ids.join(',')}`);
  assert.deepEqual(shared.errors, []);
  const runs = await shared.page.locator('span.device').allInnerTexts();
  assert.equal(runs.length, 2);
  for (const text of runs) assert.ok(text.includes(`(run ${manifest.study_run_id.slice(0, 8)})`), text);
  await shared.page.close();
});

// A contended case (web_seed: the host's `direct` at 10000 us, other processes at 40 %)
// carries the ⚠ marker with its tooltip on the Run, Compare and Map pages.
test('a contended case is marked on the Run, Compare and Map pages', async () => {
  const sweep = manifest.sweep_run_id;
  const run = await open(`/runs/${sweep}`);
  const mark = run.page.locator(`table.metrics tr[data-result="${manifest.contended_result_id}"] [data-contended]`);
  assert.equal(await mark.count(), 1);
  assert.match(await mark.getAttribute('title'), /^contended: .*other processes used 40 % of the CPU.*stays undecided/);
  assert.equal(await run.page.locator('table.metrics [data-contended]').count(), 1, 'only the contended case');
  await run.page.close();
  const ids = [agentId('x86-host'), agentId('pixel-8')];
  const compare = await open(`/compare?agents=${ids.join(',')}&runs=${sweep},${sweep}`);
  const cell = compare.page.locator('#compare-table td.cell[data-strategy="direct"]' +
    '[data-workload="batch/synthetic[cpu_ns=1000,wait_us=10000]/blocking/any"]');
  assert.equal(await cell.locator('[data-contended]').count(), 1);
  assert.match(await cell.innerText(), /A contended/);
  assert.equal(await compare.page.locator('#compare-table [data-contended]').count(), 1);
  const label = await compare.page.evaluate(() => {
    const chart = window.fleetmark.chartOf(document.querySelector('[data-chart="heatmap"]'));
    const option = chart.getOption();
    return option.series[0].data.filter((d) => d.raw.contended).map((d) => option.series[0].label.formatter({data: d}));
  });
  assert.equal(label.length, 1);
  assert.match(label[0], /^⚠/);
  await compare.page.close();
  const map = await open(`/map?agents=${ids.join(',')}&runs=${sweep},${sweep}`);
  const drawn = await map.page.evaluate(() => {
    const chart = window.fleetmark.chartOf(document.querySelector('[data-chart="strategy-map"]'));
    const option = chart.getOption();
    const point = option.series[0].data.find((d) => d.raw.point.wait_us === 10000);
    return {label: option.series[0].label.formatter({data: point}), tooltip: option.tooltip[0].formatter({data: point}),
      kind: point.raw.kind, reason: point.raw.reason};
  });
  assert.match(drawn.label, /^⚠ undecided/);
  assert.match(drawn.tooltip, /⚠ direct: contended: .*40 %/);
  assert.equal(drawn.kind, 'undecided');
  assert.match(drawn.reason, /^contended: direct/);
  await map.page.close();
});
