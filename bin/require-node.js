// The Node a Furnish program needs is package.json's `engines.node`; each bin checks it before it
// imports anything that needs that Node, so an older one prints the version to install instead of
// dying on a syntax error or ERR_UNKNOWN_FILE_EXTENSION with a stack trace. Hence this file's
// syntax: what any Node that runs ES modules parses (var, function, no `??`, `?.` or arrows).
import { readFileSync } from 'fs';

function numbers(version) {
  return version.replace(/^v/, '').split('.').map(Number);
}

/** Whether `version` (e.g. "20.20.2") comes before `floor` (e.g. "22.19"). */
export function olderThan(version, floor) {
  var a = numbers(version);
  var b = numbers(floor);
  for (var i = 0; i < 3; i++) {
    var x = a[i] || 0;
    var y = b[i] || 0;
    if (x !== y) return x < y;
  }
  return false;
}

/** The version in package.json's `engines.node` (">=22.19" gives "22.19"); package.json is the one beside this bin/. */
export function nodeFloor() {
  var engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines;
  return engines.node.replace(/^>=\s*/, '');
}

/** Exits 1 with one message (which Node `program` needs, which one this is, and `hint`) on an older Node. */
export function requireNode(program, hint) {
  var floor = nodeFloor();
  if (!olderThan(process.versions.node, floor)) return;
  process.stderr.write(program + ' needs Node.js ' + floor + ' or later; this is ' + process.version + ' (' + process.execPath + ').\n' + hint + '\n');
  process.exit(1);
}
