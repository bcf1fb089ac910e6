/** SAF-T InvoiceTypes that are receivables (an invoice and a debit note): what a buyer owes and a factor may buy */
export const RECEIVABLE_DOCUMENT_TYPES = ['FT', 'ND'] as const;
