// Start the real sidecar (`python -m adapter serve`) as a child process on a free port.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

export function python() {
  return process.env.SIDECAR_PYTHON || path.join(REPO, ".venv/bin/python");
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
    srv.on("error", reject);
  });
}

/** A running sidecar; `restart()` keeps the port and the database. */
export class SidecarProcess {
  constructor({ token = "test-token-" + Math.random().toString(36).slice(2), dir } = {}) {
    this.token = token;
    this.dir = dir ?? mkdtempSync(path.join(tmpdir(), "isc-"));
    this.db = path.join(this.dir, "db.sqlite");
    this.output = "";
  }
  get url() { return `http://127.0.0.1:${this.port}`; }

  // The first start listens on `--port 0` and reads the port the system gave from its
  // "listening on" line (a port picked free beforehand can be taken by another process, whose
  // /health would then answer for ours); a restart keeps it.
  async start() {
    const mark = this.output.length;
    this.proc = spawn(python(), ["-m", "adapter", "serve", "--host", "127.0.0.1", "--port", String(this.port ?? 0), "--db", this.db, "--token", this.token], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    this.proc.stdout.on("data", (d) => { this.output += d; });
    this.proc.stderr.on("data", (d) => { this.output += d; });
    const exited = new Promise((resolve) => this.proc.once("exit", resolve));
    this.exited = exited;
    const deadline = performance.now() + 20000; // monotonic: the wall clock may step
    while (performance.now() < deadline) {
      const said = /listening on http:\/\/[^\s]+:(\d+)/.exec(this.output.slice(mark));
      if (said) {
        this.port = Number(said[1]);
        const r = await fetch(`${this.url}/health`).catch(() => null);
        if (r?.ok) return this;
      }
      if (this.proc.exitCode !== null) throw new Error(`sidecar exited: ${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`sidecar did not start: ${this.output}`);
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill("SIGKILL");
    await this.exited;
  }

  async restart() { await this.stop(); await this.start(); }
}
