// The web view's bearer token through the real fleetmark-coordinator binary:
// --http_token_file guards the JSON API (401 without the token, 200 with it; pages stay
// public), a non-loopback --http_address without it is refused at start (exit 2,
// naming the flag), and unusable token files are refused the same way.
//
// Environment (set by tests/web/CMakeLists.txt): FLEETMARK_TEST_PG_URI,
// FLEETMARK_TEST_REQUIRE_PG, FLEETMARK_COORDINATOR. Exits 77 (skipped) without a
// database unless FLEETMARK_TEST_REQUIRE_PG=1.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {after, before, test} from 'node:test';
import {psql, startWebServer, stopWebServer, testPgUriOrExit} from './web_process.mjs';

const env = process.env;
const pgUri = testPgUriOrExit();
const coordinator = env.FLEETMARK_COORDINATOR;
const dbName = `fleetmark_token_${process.pid}_${Date.now()}`;
const dbUri = (() => {
  const u = new URL(pgUri);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const dir = mkdtempSync(join(tmpdir(), 'fleetmark-token-'));
const kToken = 'web-T0ken_with.symbols~+/=';
const tokenFile = join(dir, 'http_token');
writeFileSync(tokenFile, `${kToken}\n`, {mode: 0o600});

const baseArgs = () => [`--database_uri=${dbUri}`, '--listen_address=127.0.0.1:0'];

// Runs the coordinator expecting it to refuse its flags: returns {status, stderr}.
function refused(args) {
  const r = spawnSync(coordinator, [...baseArgs(), ...args], {encoding: 'utf8', timeout: 60000});
  return {status: r.status, stderr: r.stderr};
}

let server;
let baseUrl;

before(async () => {
  psql(pgUri, `CREATE DATABASE ${dbName}`);
  ({server, baseUrl} = await startWebServer(
      coordinator, [...baseArgs(), '--http_address=127.0.0.1:0', `--http_token_file=${tokenFile}`]));
});

after(async () => {
  await stopWebServer(server);
  rmSync(dir, {recursive: true, force: true});
  try {
    psql(pgUri, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  } catch (e) {
    console.error(String(e));
  }
});

test('the API answers 401 without the token and 200 with it', async () => {
  const denied = await fetch(`${baseUrl}/api/v1/agents`);
  assert.equal(denied.status, 401);
  assert.match(denied.headers.get('www-authenticate') || '', /^Bearer/);
  assert.match((await denied.json()).error, /bearer token/);
  const wrong = await fetch(`${baseUrl}/api/v1/runs`, {headers: {Authorization: `Bearer ${kToken}x`}});
  assert.equal(wrong.status, 401);
  for (const path of ['agents', 'runs?limit=5']) {
    const allowed = await fetch(`${baseUrl}/api/v1/${path}`, {headers: {Authorization: `Bearer ${kToken}`}});
    assert.equal(allowed.status, 200, path);
    assert.ok(Array.isArray(Object.values(await allowed.json())[0]), path);
  }
  const page = await fetch(`${baseUrl}/fleet`);
  assert.equal(page.status, 200, 'the page itself is public; it asks for the token');
});

test('a non-loopback web address without a token is refused at start', () => {
  const r = refused(['--http_address=0.0.0.0:0']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--http_address=0\.0\.0\.0:0 is not a loopback address/);
  assert.match(r.stderr, /--http_token_file/);
  assert.doesNotMatch(r.stderr, /serving gRPC/, 'refused before serving');
  // --allow_insecure_remote is about plaintext gRPC; it does not open the web API.
  const insecure = refused(['--http_address=0.0.0.0:0', '--allow_insecure_remote']);
  assert.equal(insecure.status, 2, insecure.stderr);
  assert.match(insecure.stderr, /--http_token_file/);
});

test('unusable token files are refused, the token never echoed', () => {
  const empty = join(dir, 'empty');
  writeFileSync(empty, ' \n');
  const spaced = join(dir, 'spaced');
  writeFileSync(spaced, 'two secret-words\n');
  const cases = [
    [['--http_address=127.0.0.1:0', `--http_token_file=${join(dir, 'missing')}`], /--http_token_file: ".*": cannot read/],
    [['--http_address=127.0.0.1:0', `--http_token_file=${empty}`], /--http_token_file: .* is empty/],
    [['--http_address=127.0.0.1:0', `--http_token_file=${spaced}`], /visible ASCII/],
    [[`--http_token_file=${tokenFile}`], /--http_token_file needs --http_address/],
  ];
  for (const [args, message] of cases) {
    const r = refused(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /secret-words|web-T0ken/);
  }
});
