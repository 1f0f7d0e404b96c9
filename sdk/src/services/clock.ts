/** Time source, replaceable in tests. @public */
export interface Clock {
  now(): Date;
}
