import { fetchOrders } from "./api";

export const POLL_INTERVAL_MS = 30_000;

export function pollPendingOrder(onUpdate: (status: string) => void): () => void {
  const timer = setInterval(async () => {
    const page = await fetchOrders();
    if (page.orders.length) onUpdate(page.orders[0].status);
  }, POLL_INTERVAL_MS);
  return () => clearInterval(timer);
}

export function pollAdminTable(render: (rows: unknown[]) => void): () => void {
  const timer = setInterval(async () => render((await fetchOrders()).orders), POLL_INTERVAL_MS);
  return () => clearInterval(timer);
}
