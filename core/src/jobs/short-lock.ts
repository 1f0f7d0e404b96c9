/**
 * The lock lifetime of a periodic job that takes a statement or two (a supervisor's or a sweep's). After each run
 * Agenda keeps a timer of half the lock lifetime, which holds a stopping process open that long: with Agenda's
 * default of 10 minutes, a host would take 5 minutes to exit.
 */
export const SHORT_JOB_LOCK_MS = 10_000;
