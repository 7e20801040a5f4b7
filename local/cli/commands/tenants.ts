import { cliDocumentClient } from '../../ops/dynamo';
import { listTenants, loadTenantSettings, resetTenant } from '../../ops/tenants';
import type { Command } from '../command';

export const tenantsCommand: Command = {
  name: 'tenants',
  summary: 'tenant counters and priority levels (busiest first); --reset <tenant> forgets one',
  usage:
    'fairway tenants [--reset <tenant>] [--json]\n' +
    '  Reads TENANT_TABLE (and TENANT_PRIORITY_* for the levels, as the router does).\n' +
    '  --reset deletes the tenant’s counter: its next document starts again at count 0, level 1.',
  options: { reset: { type: 'string' } },
  async run({ options, env }) {
    const settings = loadTenantSettings(env);
    const doc = cliDocumentClient(settings.dynamo, env);
    try {
      if (typeof options.reset === 'string') {
        const existed = await resetTenant(doc, settings.table, settings.rules, options.reset);
        return {
          data: { reset: options.reset, existed },
          tables: [{ rows: [{ tenant: options.reset, reset: existed ? 'counter deleted' : 'had no counter' }] }],
        };
      }
      const tenants = await listTenants(doc, settings.table, settings.rules);
      return {
        data: { tenants },
        tables: [
          {
            title: `Tenants (${tenants.length})`,
            rows: tenants.map((t) => ({ ...t })),
            empty: 'no tenant has a counter yet',
          },
        ],
      };
    } finally {
      doc.destroy();
    }
  },
};
