/**
 * A local Serverless plugin that lets the template read a schedule's interval:
 * `${schedulePeriod:<rate param>}` is the interval, in seconds, of the `rate(…)` expression that
 * stage param holds. An alarm that counts failed schedules uses it as its period, so a changed
 * rate keeps the alarm meaning "failed N schedules in a row". Anything else (a cron expression, a
 * rate CloudWatch cannot alarm over three periods of) refuses to package: a guessed period would
 * make the alarm say something untrue.
 */
class FairwaySchedule {
  constructor(serverless) {
    this.serverless = serverless;
    this.configurationVariablesSources = {
      schedulePeriod: {
        resolve: async ({ address, resolveVariable }) => {
          const rate = await resolveVariable(`param:${address}`);
          const seconds = ratePeriodSeconds(rate);
          if (typeof seconds === 'string') {
            const ServerlessError = serverless.classes.Error;
            throw new ServerlessError(`Fairway refuses to package this stage:\n- ${address}: ${seconds}`);
          }
          return { value: seconds };
        },
      },
    };
  }
}

const unitSeconds = { minute: 60, minutes: 60, hour: 3600, hours: 3600, day: 86400, days: 86400 };

/** Alarms evaluate each schedule as one period and need three of them (infra/alarms.yml). */
const schedulesPerAlarm = 3;

/** The interval of `rate(N unit)` in seconds, or why no alarm period can be derived from it. */
function ratePeriodSeconds(rate) {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(String(rate));
  if (match === null)
    return `"${rate}" is not a rate(N minutes|hours|days) expression; the cleanup errors alarms need a fixed interval`;
  const seconds = Number(match[1]) * unitSeconds[match[2]];
  // CloudWatch's limit on period × evaluation periods: one day below an hourly period, else seven days.
  const limit = seconds < 3600 ? 86_400 : 604_800;
  if (seconds < 60 || seconds * schedulesPerAlarm > limit)
    return `"${rate}" is too long for an alarm over ${schedulesPerAlarm} schedules (CloudWatch allows ${limit} s)`;
  return seconds;
}

module.exports = FairwaySchedule;
module.exports.ratePeriodSeconds = ratePeriodSeconds;
