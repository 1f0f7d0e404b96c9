// The stdio command policy's defaults (issue 16 item 1): outside development on loopback nothing may run until an
// operator lists it.
import t from 'tap';
import { StdioPolicy } from '../src/lib/stdio-policy.js';

const node = { command: process.execPath, args: ['server.js'], env: {} };

t.test('the default allows the host Node executable and npx only in development or test on loopback', async (t) => {
  t.same(StdioPolicy.from(undefined, { appEnv: 'development', loopback: true }).check(node), [], 'development on loopback: the host Node executable');
  t.same(StdioPolicy.from(undefined, { appEnv: 'development', loopback: true }).check({ command: 'npx', args: ['-y', 'pkg'], env: {} }), [], 'and npx');
  for (const [appEnv, loopback] of [
    ['production', true],
    ['staging', true],
    ['development', false],
  ] as const) {
    const policy = StdioPolicy.from(undefined, { appEnv, loopback });
    t.match(
      policy.check(node),
      [{ loc: ['connection_config', 'command'], msg: /allowed: none/ }],
      `${appEnv}${loopback ? '' : ' on a public address'}: nothing`,
    );
  }
});

t.test('a symlink or a PATH lookup cannot pass for an allowed executable', async (t) => {
  const policy = StdioPolicy.from(['npx'], { appEnv: 'production', loopback: true });
  t.same(policy.check({ command: 'npx', args: [], env: {} }), [], 'the allowed name');
  t.match(policy.check({ command: 'node', args: [], env: {} }), [{ msg: /command "node" is not allowed/ }], 'another program');
  t.match(policy.check({ command: '/bin/sh', args: [], env: {} }), [{ msg: /is not allowed/ }]);
});
