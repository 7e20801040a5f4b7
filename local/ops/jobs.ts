import { REPOSITORY_JOB } from '../../lib/cleanup/jobs/repository';
import { STATUS90_JOB } from '../../lib/cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../../lib/cleanup/jobs/timebased';

/** The cleanup jobs' stack names, as the engine stores them. */
export const cleanupJobNames: readonly string[] = [TIMEBASED_JOB, STATUS90_JOB, REPOSITORY_JOB];
