// Headless Chromium (Debian's `chromium`) over a tiny static server of the module's folder.
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Serve `/` as `page()` and every other path from the module's folder. */
export function serve(page) {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const url = new URL(req.url, "http://x");
      if (url.pathname === "/") { res.setHeader("content-type", "text/html"); return res.end(page()); }
      const file = path.join(ROOT, path.normalize(url.pathname).replace(/^\/+/, ""));
      if (!file.startsWith(ROOT) || !existsSync(file)) { res.statusCode = 404; return res.end(); }
      res.setHeader("content-type", file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : "application/json");
      res.end(readFileSync(file));
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/** Run headless Chromium with these arguments; resolves with its stdout. */
export function chromium(args) {
  return new Promise((resolve, reject) => {
    const profile = mkdtempSync(path.join(tmpdir(), "isc-chromium-"));
    execFile("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, "--virtual-time-budget=3000", ...args],
      { timeout: 60000, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

/** The DOM of `page()` after its scripts ran. */
export async function dumpDom(page) {
  const server = await serve(page);
  try {
    return await chromium(["--dump-dom", `http://127.0.0.1:${server.address().port}/`]);
  } finally {
    server.close();
  }
}
