import { foldSpaces } from '../../lib/text';

/**
 * The key under which an invoice is held by one live operation or programme at a time (Civil Code
 * art. 584: the first notified assignment prevails): its issuer's NIF and its number as printed,
 * compared without case, with any run of spaces (no-break ones included) as one, none at the ends.
 * "IK-2", " ik-2" and "IK-2\u00a0" are one invoice; they were three.
 */
export const assignmentKey = (issuerNif: string, number: string) => `${issuerNif}|${normaliseInvoiceNumber(number)}`;

export const normaliseInvoiceNumber = (number: string) => foldSpaces(number).toUpperCase();
