// The shapes of the operator documents (ops.graphql) that the ops pages read.
import type { Message, Stage } from "./types";

export interface Spend {
  key: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  priceUsd: string;
  priceDisplay: string;
  unpricedCalls: number;
}

export interface OpsRoomSummary {
  id: string;
  title: string;
  kind: string;
  hostHandle: string;
  stage: Stage;
  lastActivityAt: string;
  flagCount: number;
  totalSpend: Spend;
}

export interface OpsRun {
  id: string;
  agent: string;
  pane: string;
  status: string;
  attempts: number;
  noOp: boolean;
  error: string | null;
  verdict: string;
  createdAt: string;
  modelLatencyMs: number;
  usage: Spend;
}

export interface Takeover {
  seat: string;
  operatorId: string | null;
  takenAt: string;
  /** What the pane's agent meant to do next when it was taken over. */
  lastPlan: string | null;
}

export interface OpsRoomDetail extends OpsRoomSummary {
  mode: string;
  modelPicks: Record<string, string>;
  byAgent: Spend[];
  byModel: Spend[];
  byDay: Spend[];
  takeovers: Takeover[];
  runs: { nodes: OpsRun[]; hasNextPage: boolean };
  goalEvents: {
    nodes: {
      id: string;
      goalKey: string;
      fromStatus: string | null;
      toStatus: string;
      byPane: string;
      agent: string;
      reason: string;
      createdAt: string;
    }[];
  };
  flags: { nodes: { id: string; level: string; evidence: string; createdAt: string }[] };
}

export interface GuardVerdict {
  id: string;
  verdict: string;
  findings: string[];
  edits: { kind: string; target: string; detail: string }[];
  createdAt: string;
}

export interface OpsTranscript {
  seat: string;
  nodes: { id: string; body: string; authorKind: string; createdAt: string }[];
  hasNextPage: boolean;
}

/** What an operator reads of a room to act on it (every read is recorded server-side). */
export interface OpsRoomWhole {
  /** Every pane's participant key, host first: teammates' panes (host_2, visitor_2 …) too. */
  paneKeys: string[];
  hostLines: OpsTranscript;
  visitorLines: OpsTranscript;
  memory: unknown;
  memoryHistory: {
    nodes: { id: string; path: string; oldValue: unknown; newValue: unknown; agent: string; reason: string | null; createdAt: string }[];
  };
  dispatches: { nodes: { id: string; fromPane: string; toPane: string; substance: string; status: string; createdAt: string }[] };
  offers: { id: string; stage: string; status: string; version: number; payments: { id: string; status: string; total: string; currency: string }[] }[];
}

export interface OpsRoomData {
  opsRoom: OpsRoomDetail & OpsRoomWhole;
  roomOps: { guardVerdicts: GuardVerdict[] };
}

export type OperatorLine = Message & { paneSeat: string };

/** The agents a room's models can be picked for (ModelPickInput.agent). */
export const PICKABLE = ["persona", "distil", "context_filter", "offer_gen", "agreement"];

/** Priced spend (sub-cent amounts to the micro-dollar), and the calls no price covers. */
export function usd(s: Spend): string {
  // priceDisplay: the server's one money format (Babel), never formatted here.
  return `${s.priceDisplay}${s.unpricedCalls ? ` + ${s.unpricedCalls} unpriced` : ""}`;
}
export const when = (iso: string) => new Date(iso).toLocaleString();
