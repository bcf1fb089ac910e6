/**
 * The factoring operation's lifecycle, as data: submitted → approved | rejected → funded →
 * settled | defaulted, and cancelled before funding; a defaulted one is settled when its debtors pay
 * after all (recovery) or written off. Pure: the property test walks it.
 */
export const OPERATION_STATUSES = ['submitted', 'approved', 'rejected', 'funded', 'settled', 'defaulted', 'written_off', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];
export const OPERATION_ACTIONS = ['approve', 'reject', 'fund', 'settle', 'default', 'write_off', 'cancel'] as const;
export type OperationAction = (typeof OPERATION_ACTIONS)[number];

export const TRANSITIONS: Readonly<Record<OperationStatus, Partial<Record<OperationAction, OperationStatus>>>> = {
  submitted: { approve: 'approved', reject: 'rejected', cancel: 'cancelled' },
  approved: { fund: 'funded', cancel: 'cancelled' },
  funded: { settle: 'settled', default: 'defaulted' },
  rejected: {},
  settled: {},
  defaulted: { settle: 'settled', write_off: 'written_off' },
  written_off: {},
  cancelled: {},
};

/** The status an action leads to, or null when it does not apply. */
export const nextStatus = (from: OperationStatus, action: OperationAction): OperationStatus | null => TRANSITIONS[from][action] ?? null;
export const allowedActions = (from: OperationStatus): OperationAction[] => Object.keys(TRANSITIONS[from]) as OperationAction[];
/**
 * The actions that apply today: an approved operation whose invoice has fallen due is not funded
 * (an overdue invoice is not assigned, and its advance would carry no discount); it can be cancelled.
 */
export const actionsToday = (from: OperationStatus, dueDates: readonly string[], today: string): OperationAction[] =>
  allowedActions(from).filter((a) => !(a === 'fund' && dueDates.some((d) => d < today)));
export const isTerminal = (s: OperationStatus) => allowedActions(s).length === 0;

/**
 * Whether an operation in this status holds its invoices (a second assignment of one is refused,
 * CC art. 584): from submission until it ends. A defaulted operation keeps them — the factor still
 * owns the credit and pursues the debtor (or the seller, with recourse) — until it is recovered
 * (settled) or written off; a rejected or cancelled one never took them, a settled one was paid.
 */
export const holdsInvoices = (s: OperationStatus) => s === 'submitted' || s === 'approved' || s === 'funded' || s === 'defaulted';
