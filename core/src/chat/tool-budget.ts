/**
 * The agent's `max_tool_calls_total_per_request` for one turn (spec 8): skill
 * and MCP executions draw from this one budget, so the turn's skill handle and
 * its tool handle are given the same instance. `null` means no limit.
 */
export class ToolCallBudget {
  private used = 0;

  constructor(readonly limit: number | null) {}

  /** Takes one execution; false once the limit is reached (the caller then marks the execution `blocked`). */
  take(): boolean {
    if (this.limit !== null && this.used >= this.limit) return false;
    this.used += 1;
    return true;
  }
}
