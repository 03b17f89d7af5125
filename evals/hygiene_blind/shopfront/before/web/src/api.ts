export const API_BASE = "/v2";

export interface Order {
  id: number;
  status: string;
  amount_cents: number;
  currency: string;
}

export async function fetchOrders(cursor?: string): Promise<{ orders: Order[]; next_cursor: string | null }> {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
  const response = await fetch(`${API_BASE}/orders${query}`, { credentials: "include" });
  if (!response.ok) throw new Error(`orders: ${response.status}`);
  return response.json();
}
