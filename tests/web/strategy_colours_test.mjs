// Every strategy of the registry (engine/strategies/registry.h, kStrategies) has one of
// the fixed colours of web/src/strategy_colours.js, distinct from the others: a new
// registry row without its colour fails here (it would otherwise get a hashed one).
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {test} from 'node:test';
import {hasFixedColour, strategyColour} from '../../web/src/strategy_colours.js';

test('every registry strategy has a fixed colour of its own', () => {
  const registry = readFileSync(new URL('../../engine/strategies/registry.h', import.meta.url), 'utf8');
  const names = [...registry.matchAll(/^ {4}\{"([a-z_]+)", "/gm)].map((m) => m[1]);
  assert.ok(names.length >= 16, `registry rows found: ${names.length}`);
  for (const name of names) assert.ok(hasFixedColour(name), `${name} has no fixed colour in strategy_colours.js`);
  assert.equal(new Set(names.map(strategyColour)).size, names.length, 'two registry strategies share a colour');
});
