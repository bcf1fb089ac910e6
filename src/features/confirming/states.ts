/**
 * A confirming payable's lifecycle, as data: approved (uploaded by the anchor, offered) → accepted
 * (the supplier takes early payment) → funded (the bank pays the supplier) → settled (the anchor
 * pays at maturity) | defaulted; an approved payable the supplier leaves to maturity is settled
 * directly; approved or accepted → cancelled; a defaulted one is settled when the anchor pays after
 * all, or written off. Pure: the property test walks it.
 */
export const PAYABLE_STATUSES = ['approved', 'accepted', 'funded', 'settled', 'defaulted', 'written_off', 'cancelled'] as const;
export type PayableStatus = (typeof PAYABLE_STATUSES)[number];
export const PAYABLE_ACTIONS = ['accept', 'fund', 'settle', 'default', 'write_off', 'cancel'] as const;
export type PayableAction = (typeof PAYABLE_ACTIONS)[number];

export const PAYABLE_TRANSITIONS: Readonly<Record<PayableStatus, Partial<Record<PayableAction, PayableStatus>>>> = {
  approved: { accept: 'accepted', settle: 'settled', cancel: 'cancelled' },
  accepted: { fund: 'funded', cancel: 'cancelled' },
  funded: { settle: 'settled', default: 'defaulted' },
  settled: {},
  defaulted: { settle: 'settled', write_off: 'written_off' },
  written_off: {},
  cancelled: {},
};
export const nextPayableStatus = (from: PayableStatus, action: PayableAction): PayableStatus | null => PAYABLE_TRANSITIONS[from][action] ?? null;
export const payableActions = (from: PayableStatus): PayableAction[] => Object.keys(PAYABLE_TRANSITIONS[from]) as PayableAction[];
/**
 * The actions that apply today: early payment is offered and accepted only before the due date
 * (on it there is nothing to pay early), and an accepted payable is funded no later than its due date.
 */
export const payableActionsToday = (from: PayableStatus, dueDate: string, today: string): PayableAction[] =>
  payableActions(from).filter((a) => !((a === 'accept' && dueDate <= today) || (a === 'fund' && dueDate < today)));
/** a payable holds its invoice (no second assignment) until it is settled, written off or cancelled; a defaulted one keeps it */
export const payableHoldsInvoice = (s: PayableStatus) => s !== 'settled' && s !== 'cancelled' && s !== 'written_off';
/** statuses that use the programme's limit: a defaulted payable is still owed by the anchor (its exposure) */
export const LIMIT_STATUSES = ['approved', 'accepted', 'funded', 'defaulted'] as const satisfies readonly PayableStatus[];
export const usesLimit = (s: PayableStatus) => (LIMIT_STATUSES as readonly PayableStatus[]).includes(s);
