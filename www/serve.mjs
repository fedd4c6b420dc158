// Static server for the explorer: node serve.mjs [port] (PORT env also accepted).
// Serves www/ (including www/pkg/) with application/wasm for .wasm; no caching.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)));
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ts': 'text/plain; charset=utf-8',
};

/** `extra(req, res)` may answer a request first (returns true if it did); tests use it to fake
 * the live-mode API of `groupcoord serve --http`. `root`: the directory served (default www/;
 * bench-frames.mjs serves an older checkout of www/ with it). */
export function startServer(port = 0, host = '127.0.0.1', extra = null, root = ROOT) {
  root = resolve(root);
  const server = createServer(async (req, res) => {
    try {
      if (extra && (await extra(req, res))) return;
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const file = normalize(join(root, path));
      if (!file.startsWith(root) || file.includes('node_modules')) throw Object.assign(new Error('forbidden'), { code: 'ENOENT' });
      if (!(await stat(file)).isFile()) throw Object.assign(new Error('nf'), { code: 'ENOENT' });
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 8123);
  const host = process.env.HOST ?? '127.0.0.1';
  const s = await startServer(port, host);
  console.log(`explorer at http://${host}:${s.address().port}/`);
}
