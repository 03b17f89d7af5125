export function formatPrice(amountCents: number, currency: string, locale = navigator.language): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(amountCents / 100);
}
