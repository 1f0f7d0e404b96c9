// Debian's Chromium for the browser tests (test/browser): browser downloads are not reachable from the machines this
// project runs on, Debian's packages are. Installed with apt-get when it is missing and this process may.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${stderr}`))));
  });
}

/** The path of Debian's `chromium`, installed first when it is missing (as root, with apt-get). */
export async function ensureChromium(logger: { info(msg: string): void }): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    throw new Error(`the browser tests need Debian's chromium at ${CHROMIUM}: install it with apt-get install chromium`);
  }
  logger.info('installing Debian chromium for the browser tests');
  await run('apt-get', ['update', '-q']);
  await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium']);
  return CHROMIUM;
}
