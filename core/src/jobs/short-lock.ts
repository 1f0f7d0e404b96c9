/**
 * The lock lifetime of a periodic job that takes a statement or two (a supervisor's or a sweep's). After each run
 * Agenda keeps a timer of half the lock lifetime, which holds the event loop that long after the host stops: with
 * Agenda's default of 10 minutes, a process running a host in-process (the integration tests) would not exit for 5.
 */
export const SHORT_JOB_LOCK_MS = 10_000;
