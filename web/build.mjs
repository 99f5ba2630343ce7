// Bundles the web view with esbuild: SRC/src/main.js (+ ECharts, + CSS) ->
// OUT/assets/app.{js,css}, and copies SRC/index.html to OUT. Run from the folder that
// holds node_modules (the build tree: web/CMakeLists.txt copies this file there).
//   node build.mjs SRC OUT
import {build} from 'esbuild';
import {copyFileSync, mkdirSync} from 'node:fs';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [srcArg, outArg] = process.argv.slice(2);
if (!srcArg || !outArg) {
  console.error('usage: node build.mjs SRC OUT');
  process.exit(2);
}
const src = resolve(srcArg);
const out = resolve(outArg);
mkdirSync(join(out, 'assets'), {recursive: true});
await build({
  entryPoints: {app: join(src, 'src', 'main.js')},
  bundle: true,
  format: 'esm',
  minify: true,
  sourcemap: true,
  target: ['es2020'],
  outdir: join(out, 'assets'),
  nodePaths: [join(here, 'node_modules')],
  logLevel: 'warning',
  legalComments: 'linked',
});
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));
