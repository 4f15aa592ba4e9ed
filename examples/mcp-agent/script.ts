import type { ModelRequest, ScriptStep } from 'logbook';

/** The text of the last result of `tool` the model was shown, or undefined. */
function lastResult(request: ModelRequest, tool: string): string | undefined {
  for (const m of [...request.messages].reverse()) if (m.role === 'tool' && m.name === tool && !m.isError) return m.content;
  return undefined;
}

/**
 * The scripted model of `logbook dev`: look the item up, reserve it, ship it, answer. Replies that
 * need a tool's result read it from the request, so a resumed run gets the same reply.
 */
export function warehouseScript(sku = 'sku-anvil', address = '1 Main St, Springfield'): ScriptStep[] {
  return [
    { text: 'Checking stock.', calls: [{ name: 'warehouse_find_item', args: { sku } }] },
    { text: 'In stock: reserving one.', calls: [{ name: 'warehouse_reserve_item', args: { sku, quantity: 1 } }] },
    (request) => {
      const reservationId = /as (res-\d+)/.exec(lastResult(request, 'warehouse_reserve_item') ?? '')?.[1] ?? 'res-unknown';
      return { text: 'Reserved: shipping.', calls: [{ name: 'warehouse_ship_order', args: { reservationId, address } }] };
    },
    (request) => ({ text: `Done: ${lastResult(request, 'warehouse_ship_order') ?? 'nothing shipped'}.` }),
  ];
}
