import { loadDistributorConfig } from '../lib/config/distributor';
import { distributorHandler } from '../lib/distributor/service';

export const handler = distributorHandler(loadDistributorConfig(process.env));
