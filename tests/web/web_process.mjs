// Shared helpers of the web tests: psql, and starting/stopping a server process that
// prints "web view at http://…" on stderr (fleetmark-coordinator or web_test_server).
import {spawn, spawnSync} from 'node:child_process';

// Runs one SQL string through psql on `uri`; throws with psql's stderr on failure.
export function psql(uri, sql) {
  const r = spawnSync('psql', [uri, '-v', 'ON_ERROR_STOP=1', '-qtA', '-c', sql], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout;
}

// Starts `binary args` and resolves {server, baseUrl} once it prints its web address
// (rejects if it exits first or takes over 60 s). `echo` copies its stderr to ours.
export function startWebServer(binary, args, {echo = false} = {}) {
  const server = spawn(binary, args, {stdio: ['ignore', 'inherit', 'pipe']});
  return new Promise((resolve, reject) => {
    let log = '';
    let done = false;
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${log}`)), 60000);
    server.stderr.on('data', (chunk) => {
      log += chunk;
      if (echo) process.stderr.write(chunk);
      const m = log.match(/web view at (http:\/\/\S+)/);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({server, baseUrl: m[1].replace(/\/$/, '')});
      }
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${log}`)));
  });
}

// Stops a server started by startWebServer: SIGTERM, then SIGKILL after 10 s.
export async function stopWebServer(server) {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.on('exit', resolve));
  server.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10000))]);
  if (server.exitCode === null) server.kill('SIGKILL');
}

// The PostgreSQL URI of the test run (FLEETMARK_TEST_PG_URI). Without one the test
// exits 77 (skipped) — or 1 when FLEETMARK_TEST_REQUIRE_PG=1, as under the test command.
export function testPgUriOrExit() {
  const uri = process.env.FLEETMARK_TEST_PG_URI || '';
  if (!uri) {
    if (process.env.FLEETMARK_TEST_REQUIRE_PG === '1') {
      console.error('FLEETMARK_TEST_PG_URI is not set but FLEETMARK_TEST_REQUIRE_PG=1');
      process.exit(1);
    }
    console.error('skipped: FLEETMARK_TEST_PG_URI is not set');
    process.exit(77);
  }
  return uri;
}
