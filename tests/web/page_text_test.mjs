// The web view's text rules, in node (no browser): what the pages show of text they did
// not write (displayText, web/src/dom.js: the CLI's EscapeForTerminal rule, the vectors
// of tests/engine/common/text_test.cc) and a run's results count (resultsText,
// web/src/format.js: the API's and the CLI's count).
import assert from 'node:assert/strict';
import {test} from 'node:test';
import {displayText, escapeHtml} from '../../web/src/dom.js';
import {resultsText} from '../../web/src/format.js';

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
