// The WebAssembly core under Node, as a command: what the page and the
// extension call, on files named on the command line.
//
//   node tests/web/diagnose.mjs CORE_JS FORMAT YEAR FILE...
//
// YEAR is --year (0: infer).
//
// Prints the report on stdout and the input problems on stderr, one per
// line, as `denpex diagnose --format FORMAT FILE...` would.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

const [coreJs, format, year, ...files] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const DenpexCore = require(coreJs);

export async function loadCore(path) {
  const Module = await (path === coreJs ? DenpexCore : require(path))();
  const add = Module.cwrap('denpex_add', null, ['string', 'number', 'number', 'number']);
  const run = Module.cwrap('denpex_run', 'string', ['string', 'number', 'number', 'number']);
  return {
    version: Module.cwrap('denpex_version', 'string', [])(),
    reset: Module.cwrap('denpex_reset', null, []),
    diagnostics: () => JSON.parse(Module.cwrap('denpex_diagnostics', 'string', [])()),
    add(name, bytes, mtime = -1) {
      const ptr = Module._malloc(Math.max(bytes.length, 1));
      Module.HEAPU8.set(bytes, ptr);
      add(name, ptr, bytes.length, mtime);
      Module._free(ptr);
    },
    run,
  };
}

const core = await loadCore(coreJs);
for (const f of files) {
  core.add(f, readFileSync(f), Math.floor(statSync(f).mtimeMs / 1000));
}
process.stdout.write(core.run(format, new Date().getUTCFullYear(), Number(year), 100));
for (const d of core.diagnostics()) {
  process.stderr.write(`denpex: ${d}\n`);
}
