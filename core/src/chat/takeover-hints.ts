/** How many sessions an instance remembers having seen under human takeover; the oldest seen are forgotten first. */
const TAKEOVER_HINT_CAPACITY = 10_000;

/**
 * The customers' sessions this instance last saw under human takeover, so that the next message of one is admitted
 * by the statement that stores it at once (`ConversationStore.continueIssued`), and an AI turn by the cheaper one that
 * only takes its ticket: the statement that may store a message writes two more tables, whose locks and indexes every
 * AI turn would pay for. Only a hint: a wrong one costs Postgres some work (an AI turn's ticket taken by the larger
 * statement) or a round trip (a message under takeover stored by the statement opening the session), never a
 * different result.
 */
export class TakeoverHints {
  private readonly seen = new Set<string>();

  constructor(private readonly capacity = TAKEOVER_HINT_CAPACITY) {}

  underTakeover(sessionId: string): boolean {
    return this.seen.has(sessionId);
  }

  /** What a statement just read of the session's status. */
  note(sessionId: string, underTakeover: boolean): void {
    this.seen.delete(sessionId);
    if (!underTakeover) return;
    this.seen.add(sessionId);
    // A Set keeps insertion order: its first value is the session seen longest ago.
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.values().next().value!);
  }
}
