import { serviceFunctions } from '../../../local/service';
import { DISTRIBUTOR_SCHEDULE_FLOOR_MS, Scheduler } from '../../../local/stack/scheduler';

describe("npm start's schedules", () => {
  const functions = serviceFunctions('dev').filter((fn) => fn.schedule?.enabled);
  const everyMs = (speed: number) => new Scheduler(functions, speed, async () => undefined).stats;

  it("keeps the distributor's schedule, its backstop, at least 10 s apart however fast the demo runs", () => {
    const distributor = functions.find((fn) => fn.name === 'distributor')!;
    expect(distributor.schedule!.everyMs).toBeGreaterThan(DISTRIBUTOR_SCHEDULE_FLOOR_MS);
    expect(everyMs(600).get('distributor')!.everyMs).toBe(DISTRIBUTOR_SCHEDULE_FLOOR_MS);
    expect(everyMs(1).get('distributor')!.everyMs).toBe(distributor.schedule!.everyMs);
  });

  it('divides every other schedule by the speed', () => {
    const others = functions.filter((fn) => fn.name !== 'distributor');
    expect(others.length).toBeGreaterThan(0);
    for (const fn of others) expect(everyMs(600).get(fn.name)!.everyMs).toBe(fn.schedule!.everyMs / 600);
  });
});
