// The shapes of the documents in operations.graphql that the client reads.
export type Seat = "HOST" | "VISITOR";
export type Stage =
  | "NO_WRITTEN_OFFER"
  | "WRITTEN_AWAITING_BRAND"
  | "BRAND_ACKED_AWAITING_TALENT"
  | "BOOKED_AWAITING_PAYMENT"
  | "PENDING_PAY_CAPTURE"
  | "BOOKED_PAYMENT_HELD"
  | "COMPLETED"
  | "DISPUTED"
  | "DECLINED"
  | "WITHDRAWN";
export type OfferAction = "APPROVE" | "COUNTER" | "REJECT" | "ADD" | "PAY";

export interface Message {
  id: string;
  cursor: string;
  body: string;
  authorKind: "PARTICIPANT" | "AGENT" | "SYSTEM" | "OPERATOR";
  seat: Seat;
  alignment: "LEFT" | "RIGHT";
  clientMessageId: string | null;
  createdAt: string;
  /** For a system line: what it is about (TURN_RETRYING, TURN_FAILED: the agent could not answer). */
  systemKind?: "NOTICE" | "MEMORY_MERGED" | "TURN_RETRYING" | "TURN_FAILED" | null;
}

export interface Offer {
  id: string;
  version: number;
  stage: Stage;
  stageGloss: string;
  brandApprovedAt: string | null;
  terms: {
    deliverables: string[];
    fee: { amount: string; currency: string; display: string } | null;
    dates: string[];
    usageRights: string | null;
    exclusivity: string | null;
    dueSlicePercent: string | null;
    openQuestions: string[];
    seller: { handle: string; displayName: string };
    buyer: { handle: string; displayName: string } | null;
  };
  payment: {
    currency: string;
    fee: string;
    duePercent: string;
    due: string;
    platformFee: string;
    total: string;
    remaining: string;
    defaultSchedule: boolean;
    feeDisplay: string;
    dueDisplay: string;
    platformFeeDisplay: string;
    totalDisplay: string;
    remainingDisplay: string;
  } | null;
  payments: { id: string; status: string; method: string; currency: string; total: string; totalDisplay: string }[];
  agreement: { text: string; current: boolean } | null;
  viewerActions: OfferAction[];
  /** The buttons this reader may press, labelled as the agents name them (one source). */
  viewerButtons: { action: OfferAction; label: string }[];
}

interface RoomBase {
  id: string;
  kind: "HOME" | "DEAL";
  mode: "LIVE" | "DEMO" | "SCRIPTED";
  title: string;
  subtitle: string;
  stage: Stage;
}

export interface Room extends RoomBase {
  readerSeat: Seat;
  readableSeats: Seat[];
  host: { handle: string; displayName: string; link: string };
  /** The host's service the room is about (from /z/<handle>/<service>), or null. */
  service: { key: string; name: string } | null;
  participants: Participant[];
  /** Every pane the reader may read (its own among them). */
  panes: PaneInfo[];
  /** The guest gate is up in the visitor's view (always false for anyone else). */
  loginRequired: boolean;
  /** How many outbound effects wait on the guest's sign-in (visitor's view only). */
  heldEffects: number | null;
  offer: Offer | null;
}

/** Someone in the room, as the reader may know of them (Room.participants). */
export interface Participant {
  id: string;
  /** host, visitor (the sides' leads), host_2, visitor_2 … (their teammates). */
  key: string;
  seat: Seat;
  isYou: boolean;
  sharedWithSide: boolean;
  mayApprove: boolean;
  displayName: string;
  isGuest: boolean;
}

/** A pane the reader may read (Room.panes): whose it is and who talks there. */
export interface PaneInfo {
  key: string;
  participantId: string;
  seat: Seat;
  relationshipLabel: string;
}

/** What Room.participants and Room.panes answer (RoomPeople, the panel's mutations). */
export interface People {
  participants: Participant[];
  panes: PaneInfo[];
}

/** A roomEvents hint: which room changed; the list is re-read (RESYNC: all of it). */
export interface RoomActivity {
  kind: "NEW_ROOM" | "MESSAGE" | "STAGE_CHANGED" | "RESYNC";
  roomId: string | null;
  cursor: string | null;
}

export interface RoomSummary extends RoomBase {
  lastActivityAt: string;
  lastMessage: { id: string; cursor: string; body: string; authorKind: string; seat: Seat } | null;
}

export interface Me {
  id: string;
  handle: string;
  displayName: string;
  email: string | null;
  isOperator: boolean;
  homeRoom: { id: string } | null;
}

export type PaneEvent =
  | { __typename: "MessageAdded"; cursor: string; message: Message }
  | { __typename: "SystemLine"; cursor: string; message: Message }
  | { __typename: "AgentTyping"; cursor: string; messageId: string; agent: string }
  | { __typename: "MessageDelta"; cursor: string; messageId: string; delta: string }
  | { __typename: "StageChanged"; cursor: string; offerId: string; stage: Stage; stageGloss: string; version: number }
  | { __typename: "LoginRequiredChanged"; cursor: string; loginRequired: boolean };

export interface StageChange {
  cursor: string;
  offerId: string;
  stage: Stage;
  stageGloss: string;
  version: number;
  at: string;
}

export const STAGE_LABEL: Record<Stage, string> = {
  NO_WRITTEN_OFFER: "Talking",
  WRITTEN_AWAITING_BRAND: "Offer written · awaiting brand",
  BRAND_ACKED_AWAITING_TALENT: "Brand approved · awaiting talent",
  BOOKED_AWAITING_PAYMENT: "Booked · awaiting payment",
  PENDING_PAY_CAPTURE: "Booked · payment pending",
  BOOKED_PAYMENT_HELD: "Booked · payment held",
  COMPLETED: "Completed",
  DISPUTED: "Disputed",
  DECLINED: "Declined",
  WITHDRAWN: "Withdrawn",
};
