// callDeadline (@agent-host/sdk): one deadline for a whole call joined with the caller's signal, on a plain
// AbortController, so a client library's abort listener on it does not keep a composite signal alive (bench/stream
// --leak-check measured the leak that AbortSignal.any caused on Node 20).
import { getEventListeners } from 'node:events';
import { callDeadline } from '@agent-host/sdk';
import t from 'tap';

t.test('the deadline aborts the call as a timeout; dispose stops listening to the caller', async (t) => {
  const caller = new AbortController();
  const deadline = callDeadline(20, caller.signal);
  t.equal(getEventListeners(caller.signal, 'abort').length, 1, 'the caller is listened to while the call runs');
  // The deadline's own timer is unref'd (it never holds a process open), so this test waits on a timer of its own.
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same([deadline.timedOut, (deadline.signal.reason as Error).name], [true, 'TimeoutError'], 'the deadline stopped it, as a TimeoutError');
  deadline.dispose();
  t.equal(getEventListeners(caller.signal, 'abort').length, 0, 'and no listener is left on the caller once disposed');
});

t.test("the caller's abort stops the call with the caller's reason, before or during it", async (t) => {
  const caller = new AbortController();
  const deadline = callDeadline(60_000, caller.signal);
  caller.abort(new Error('the client went away'));
  t.same([deadline.signal.aborted, deadline.timedOut, (deadline.signal.reason as Error).message], [true, false, 'the client went away']);
  deadline.dispose();
  const gone = AbortSignal.abort();
  t.ok(callDeadline(60_000, gone).signal.aborted, 'an already aborted caller gives an aborted call');
  const alone = callDeadline(60_000);
  t.notOk(alone.signal.aborted, 'no caller: only the deadline stops it');
  alone.dispose();
});
