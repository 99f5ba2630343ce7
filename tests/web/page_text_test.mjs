// The web view's text rules, in node (no browser): what the pages show of text they did
// not write (displayText, web/src/dom.js: the CLI's EscapeForTerminal rule, the vectors
// of tests/engine/common/text_test.cc), a run's results count (resultsText,
// web/src/format.js: the API's and the CLI's count), a host's core classes
// (coreClassesText, web/src/host_text.js: the CLI's host summary), a strategy's colour
// (strategyColour, web/src/strategy_colours.js: one per strategy on every page) and the
// Fleet page's summary line (fleetSummaryText, web/src/fleet_text.js).
import assert from 'node:assert/strict';
import {test} from 'node:test';
import {displayText, escapeHtml} from '../../web/src/dom.js';
import {fleetSummaryText, isImportedDevice} from '../../web/src/fleet_text.js';
import {resultsText} from '../../web/src/format.js';
import {coreClassesText, coreClassText} from '../../web/src/host_text.js';
import {strategyColour} from '../../web/src/strategy_colours.js';
import {sharedBarAxis, strategyMapAxes} from '../../web/src/charts/axis.js';

test('text from agents is shown as the CLI prints it', () => {
  // EscapeForTerminalKeepsTextAndEscapesControls
  assert.equal(displayText('\x1b]0;pwned\x07\x1b[1A'), '\\x1b]0;pwned\\x07\\x1b[1A');
  assert.equal(displayText('µs <b> ok'), 'µs <b> ok');
  assert.equal(displayText('a\nb\tc'), 'a\\x0ab\\x09c');
  assert.equal(displayText('csi \u009b'), 'csi \\xc2\\x9b');
  assert.equal(displayText('nul\0'), 'nul\\x00');
  assert.equal(displayText('del\x7f'), 'del\\x7f');
  // EscapeForTerminalEscapesFormatCharacters (issue 32: zero-width characters raw)
  assert.equal(displayText('a\u202ebc'), 'a\\u202ebc');
  assert.equal(displayText('\u2066x\u2069'), '\\u2066x\\u2069');
  assert.equal(displayText('zero\u200bwidth'), 'zero\\u200bwidth');
  assert.equal(displayText('join\u200d\u200cer'), 'join\\u200d\\u200cer');
  assert.equal(displayText('\ufeffbom'), '\\ufeffbom');
  assert.equal(displayText('tag\u{e0041}'), 'tag\\ue0041');
  assert.equal(displayText('soft\u00adhyphen'), 'soft\\u00adhyphen');
  assert.equal(displayText('µs é 中 \u2013'), 'µs é 中 \u2013');
  assert.equal(displayText(42), '42');
  // Chart tooltips (HTML strings) take the same rule.
  assert.equal(escapeHtml('<b>\u200b</b>'), '&lt;b&gt;\\u200b&lt;/b&gt;');
});

test("a cancelled run's page counts its results as the API does", () => {
  // Issue 32: 19 cancelled placeholders were counted "19 results" where the API said 0.
  const placeholders = Array.from({length: 19}, () => ({status: 'cancelled'}));
  assert.equal(resultsText({results: 0}, placeholders), '0 results, 19 cancelled');
  assert.equal(resultsText({results: 2}, [{status: 'ok'}, {status: 'failed'}]), '2 results');
  assert.equal(resultsText({results: 1}, [{status: 'ok'}, {status: 'cancelled'}]), '1 results, 1 cancelled');
});

test('a core class with no allowed CPU is not available, never "0 × 1T"', () => {
  // Issue 32, item 9: under a cpuset to the P-cores the E-core class has no CPU (cores
  // 0, threads 0); the Fleet page showed "efficiency: 0 × 1T".
  const perf = {name: 'performance', cpus: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    machine_cpus: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], cores: 6, threads_per_core: 2,
    max_frequency_khz: 4700000, microarchitecture: 'IntelCore'};
  const eff = {name: 'efficiency', cpus: [], machine_cpus: [12, 13, 14, 15, 16, 17, 18, 19], cores: 0,
    threads_per_core: 0, max_frequency_khz: 3500000, microarchitecture: 'IntelAtom'};
  assert.equal(coreClassText(perf), 'performance: 6 × 2T IntelCore @ 4.70 GHz');
  assert.equal(coreClassText(eff), 'efficiency: not available here (8 machine CPUs, none allowed)');
  assert.equal(coreClassesText({core_classes: [perf, eff]}),
    'performance: 6 × 2T IntelCore @ 4.70 GHz · efficiency: not available here (8 machine CPUs, none allowed)');
  // Part of a class allowed, SMT off on some of its cores: the CPUs, not cores × threads.
  assert.equal(coreClassText({...perf, cpus: [0, 1, 2, 4, 6], cores: 4, threads_per_core: 2}),
    'performance: 4 cores, 5 threads IntelCore @ 4.70 GHz, 5 of 12 machine CPUs allowed');
  // A host recorded before machine_cpus (older agents): as it was.
  assert.equal(coreClassText({name: 'performance', cpus: [0, 1], cores: 2, threads_per_core: 1}), 'performance: 2 × 1T');
  assert.equal(coreClassText({name: 'efficiency', cpus: [], cores: 0}), 'efficiency: not available here');
  assert.equal(coreClassesText({}), '–');
});

test('a strategy has one colour wherever it is drawn', () => {
  // The registry's strategies in registry order, and the crossover plan's labels: fixed.
  assert.equal(strategyColour('direct'), '#4e79a7');
  assert.equal(strategyColour('fixed_pool'), '#e15759');
  assert.equal(strategyColour('fixed_pool_io'), '#2a5d8f');
  // Any other name: a colour of its own from its name alone, the same on every call.
  const mine = strategyColour('my_pool_17');
  assert.match(mine, /^#[0-9a-f]{6}$/);
  assert.equal(strategyColour('my_pool_17'), mine);
  assert.notEqual(strategyColour('my_pool_18'), mine);
  const known = ['direct', 'single_thread', 'fixed_pool', 'work_stealing', 'limited', 'elastic_pool', 'thread_per_task',
    'async', 'coroutine', 'fiber', 'event_loop', 'fixed_pool_cpu', 'fixed_pool_io', 'elastic_pool_io', 'work_stealing_cpu'];
  assert.equal(new Set(known.map(strategyColour)).size, known.length, 'the known strategies differ');
});

test("a group's bar charts share one value axis, log when the values span 10x", () => {
  // Issue 34, small gaps: each device's chart had its own linear axis, so a 2 µs bar
  // vanished next to 40 ms ones.
  const wide = [{value: 2000, low: 1900, high: 2100}, {value: 40e6, low: 39e6, high: 41e6}];
  const axis = sharedBarAxis(wide, null);
  assert.equal(axis.log, true);
  assert.ok(axis.min > 0 && axis.min < 1900, `min ${axis.min} below the smallest end`);
  assert.ok(axis.max >= 41e6, `max ${axis.max} covers the largest end`);
  assert.equal(sharedBarAxis(wide, '0').log, false, 'log=0 forces a linear axis');
  assert.equal(sharedBarAxis(wide, '0').min, 0);
  const narrow = [{value: 100, low: 90, high: 110}, {value: 300, low: 280, high: 320}];
  assert.equal(sharedBarAxis(narrow, '').log, false, 'a 3.6x span stays linear');
  assert.equal(sharedBarAxis(narrow, '1').log, true, 'log=1 forces a log axis');
  assert.equal(sharedBarAxis(narrow, '').max, 320 * 1.05);
  // Nothing positive (all unsupported): ECharts chooses.
  const none = sharedBarAxis([{value: 0, low: 0, high: 0}], '');
  assert.equal(none.min, undefined);
  assert.equal(none.max, undefined);
});

test("a 2-D strategy map names both axes, the y axis beside its labels", () => {
  const two = strategyMapAxes(['wait_us', 'cpu_ns'], ['10', '100'], ['1,000', '10,000']);
  assert.equal(two.xAxis.name, 'wait_us');
  assert.equal(two.yAxis.name, 'cpu_ns');
  assert.equal(two.yAxis.nameLocation, 'middle');
  assert.equal(two.yAxis.nameRotate, 90);
  assert.ok(two.grid.left > 8, 'room for the rotated name');
  const one = strategyMapAxes(['wait_us'], ['10', '100'], ['']);
  assert.equal(one.yAxis.name, undefined, 'one swept parameter: no y axis to name');
  assert.equal(one.yAxis.axisLabel.show, false);
});

test('the Fleet summary counts imported device records apart from the agents, each row once', () => {
  // Issue 34: imported device records (`results import`) were counted as agents.
  const rows = [{state: 'online'}, {state: 'offline', health: 'quarantined'}, {state: 'offline'},
    {state: 'imported'}, {state: 'imported'}, {state: 'removed'}];
  assert.equal(fleetSummaryText(rows),
    '3 agents, 1 online, 1 quarantined (skipped by selectors without health=any) · 2 imported devices; ' +
    '1 removed (their results are kept).');
  assert.equal(fleetSummaryText([{state: 'online'}, {state: 'imported'}]), '1 agent, 1 online · 1 imported device.');
  assert.equal(fleetSummaryText([{state: 'imported'}]), '0 agents, 0 online · 1 imported device.');
  assert.equal(fleetSummaryText([{state: 'offline'}]), '1 agent, 0 online.', 'no imported part without any');
  // A removed row (an imported one too: the API says "removed") is counted as removed only.
  assert.equal(fleetSummaryText([{state: 'removed', health: 'quarantined'}]), '0 agents, 0 online; 1 removed (their ' +
    'results are kept).');
  assert.deepEqual(rows.map(isImportedDevice), [false, false, false, true, true, false]);
});
