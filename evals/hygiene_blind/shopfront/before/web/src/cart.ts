export const CART_KEY = "shopfront.cart.v2";

export interface CartItem {
  sku: string;
  quantity: number;
}

export class CartStore {
  private items: CartItem[] = [];

  load(): void {
    this.items = JSON.parse(localStorage.getItem(CART_KEY) ?? "[]");
  }

  addItem(sku: string, quantity = 1): void {
    const found = this.items.find((item) => item.sku === sku);
    if (found) found.quantity += quantity;
    else this.items.push({ sku, quantity });
    localStorage.setItem(CART_KEY, JSON.stringify(this.items));
  }
}