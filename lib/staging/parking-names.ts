/**
 * Where the distributor parks a target's messages the broker would refuse to take from it. No
 * `»` in the name, so discovery never takes it for a staging queue and moves it back.
 */
export const parkingQueueName = (target: string) => `fairway-parked:${target}`;
