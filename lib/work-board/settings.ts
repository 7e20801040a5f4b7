/** How a function asks for passes, translated once from its configuration (lib/settings/common.ts). */
export interface PassRequestSettings {
  /** The distributor's table, whose lease items record requested passes; unset: passes run on the schedule alone. */
  readonly table: string | undefined;
  /** The distributor function invoked asynchronously for a pass on demand; unset: schedule alone. */
  readonly functionName: string | undefined;
  /** A requested pass not started this long after it was due is presumed lost and asked for again. */
  readonly graceMs: number;
  readonly region: string;
  /** A Lambda endpoint URL, only for the local stack and the benches. */
  readonly lambdaEndpoint: string | undefined;
}
