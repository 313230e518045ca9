import type { AppContext } from '../../app.js';
import { notFound } from '../../errors.js';
import { machineJson } from '../serialize.js';
import { stringParam } from '../params.js';
import type { Registrar } from './registrar.js';

/** GET /machines/list and /machines/view/<name> (cuckoo-compat §4.17); machines are looked up by name. */
export function machineRoutes(r: Registrar, ctx: AppContext): void {
  r.get('/machines/list', async () => ({ machines: (await ctx.stores.machines.list()).map(machineJson) }), { v1: true });

  r.get(
    '/machines/view/:name',
    async (request) => {
      const machine = await ctx.stores.machines.getByName(stringParam(request, 'name'));
      if (!machine) throw notFound('Machine not found');
      return { machine: machineJson(machine) };
    },
    { v1: true },
  );
}
