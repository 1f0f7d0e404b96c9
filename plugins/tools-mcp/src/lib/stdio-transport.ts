import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const STDERR_TAIL_CHARS = 1000;
const ownGroups = process.platform !== 'win32';

/** Children alive right now, killed with their groups if the host exits without closing them. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (ownGroups) process.kill(-child.pid!, signal);
    else child.kill(signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export interface StdioLaunch {
  /** The executable, resolved by the stdio policy. */
  command: string;
  args: string[];
  /** Added to the minimal default environment; the host's own environment is not passed on. */
  env: Record<string, string>;
  /** The child's working directory: an empty one, so nothing of the host's is at hand by a relative path. */
  cwd: string;
  /** How long the server may take to exit after its stdin closes, and again after SIGTERM. */
  shutdownGraceMs: number;
  /** The largest message the server may send; past it the server is ended, as its output cannot be resynchronised. */
  maxMessageBytes: number;
  /** Told how the process ended and the end of its stderr, which goes to the log and never to a caller. */
  onExit?: (status: string, stderr: string) => void;
}

/**
 * MCP over a child's stdin/stdout, like the SDK's `StdioClientTransport`, but
 * the child leads its own process group and `close()` resolves only once the
 * child has exited and been reaped. Servers are often started through
 * wrappers (`sh -c`, `npx`) whose own children would survive a signal to the
 * wrapper alone; signalling the group ends them all. Shutdown follows the MCP
 * stdio rule: close stdin, then SIGTERM, then SIGKILL.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcess;
  private exited?: Promise<void>;
  private readonly buffer: ReadBuffer;
  private stderrTail = '';
  private exitStatus?: string;
  private overflow?: string;

  constructor(private readonly launch: StdioLaunch) {
    this.buffer = new ReadBuffer({ maxBufferSize: launch.maxMessageBytes });
  }

  /** The server process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Once the process has ended, how, for error messages. Not its stderr: a server's stderr can carry anything it
   * read (its environment, files), so it goes to the log only.
   */
  diagnosis(): string {
    return [this.overflow, this.exitStatus].filter(Boolean).join('; ');
  }

  start(): Promise<void> {
    if (this.child) throw new Error('stdio transport already started');
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const child of liveChildren) killGroup(child, 'SIGKILL');
      });
    }
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.command, this.launch.args, {
        env: { ...getDefaultEnvironment(), ...this.launch.env },
        cwd: this.launch.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: ownGroups,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => {
        child.once('exit', (code, signal) => {
          liveChildren.delete(child);
          this.exitStatus = signal ? `server process killed by ${signal}` : `server process exited with code ${code}`;
          this.launch.onExit?.(this.exitStatus, this.stderrTail.trim());
          // Whatever the leader left behind in its group goes with it.
          killGroup(child, 'SIGKILL');
          done();
        });
      });
      child.once('spawn', () => {
        liveChildren.add(child);
        resolve();
      });
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('close', () => this.onclose?.());
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => {
        if (this.overflow) return;
        try {
          this.buffer.append(chunk);
        } catch (error) {
          // Past the message size limit the stream cannot be resynchronised: the server is ended, and what it sends
          // meanwhile is dropped, so a flood cannot fill the host's memory.
          this.overflow = `the server sent a message of more than ${this.launch.maxMessageBytes} bytes ([plugins.tools-mcp] max_message_bytes)`;
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable) return Promise.reject(new Error(`not connected (${this.diagnosis() || 'server process gone'})`));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.stdin!.end();
      if (!(await this.exitsWithin(this.launch.shutdownGraceMs))) {
        killGroup(child, 'SIGTERM');
        if (!(await this.exitsWithin(this.launch.shutdownGraceMs))) killGroup(child, 'SIGKILL');
      }
    }
    if (child.pid !== undefined) await this.exited;
    this.buffer.clear();
  }

  private exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    return Promise.race([this.exited!.then(() => true), expired]).finally(() => clearTimeout(timer));
  }
}
