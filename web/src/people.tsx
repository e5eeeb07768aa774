// Who is in a room, by side, and what the reader may do about it: invite someone to its own
// side (a single-use link to hand over), remove someone or leave, let a teammate approve offers
// (the buying account) and share a pane with the side (the visitor who opened the room). The
// server decides every one of these; the buttons only show where it would say yes.
import { useState } from "preact/hooks";
import { GraphQLFailure, gql } from "./gql";
import type { Participant, People, Room, Seat } from "./types";

/** The two sides' leads: the host, and the visitor who opened the room (the buying account). */
const LEADS: ReadonlySet<string> = new Set(["host", "visitor"]);

const REASONS: Record<string, string> = {
  INVITATION_USED: "This invitation was already used. Ask the person who sent it for a new link.",
  INVITATION_EXPIRED: "This invitation has expired. Ask the person who sent it for a new link.",
  INVITATION_INVALID: "This invitation link is not valid. Check that you copied all of it, or ask for a new one.",
  ALREADY_ON_OTHER_SIDE: "You are already in this room on the other side. One person sits on one side only.",
  ROOM_FULL: "The room is full: it already holds as many people as it may.",
  INVITE_SELF: "That is your own email address: you are already in this room.",
  GUEST_CANNOT_INVITE: "Sign up or sign in first: a guest cannot invite anyone.",
  LOGIN_REQUIRED: "Sign up or sign in first.",
  LAST_OF_SIDE: "The person who opened the room cannot be removed: each side keeps its lead.",
  CANNOT_REMOVE_HOST: "The host cannot be removed from their own room.",
  NOT_YOUR_SIDE: "You may remove only people on your own side.",
  NOT_AN_APPROVER: "Only the buying account chooses who may approve offers.",
  NOT_THE_BUYER: "Only the buying account chooses who may approve offers.",
  NOT_A_MEMBER: "Only a member of the buyer's side can be allowed to approve.",
  NOT_THE_LEAD: "Only the person who opened the room shares its side's panes.",
  NOT_A_DEAL_ROOM: "Only a deal room takes more people.",
};

/** A refusal in words a person can act on: by extensions.reason, else the server's message. */
export function reasonText(e: unknown): string {
  if (e instanceof GraphQLFailure) {
    const reason = e.extensions.reason;
    if (typeof reason === "string" && REASONS[reason]) return REASONS[reason];
    return e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

/** The participants the reader is (a host previewing its demo room is both leads). */
function mine(room: Room): Participant[] {
  return room.participants.filter((p) => p.isYou);
}

const sideName = (seat: Seat) => (seat === "HOST" ? "Host side" : "Visitor side");

/** The header's button that opens and closes the panel (closed, the room looks as before). */
export function PeopleToggle(props: { room: Room; open: boolean; onToggle: () => void; controls: string }) {
  const count = props.room.participants.length;
  return (
    <button
      type="button"
      class="people-toggle small"
      aria-expanded={props.open}
      aria-controls={props.controls}
      onClick={props.onToggle}
    >
      People ({count})
    </button>
  );
}

export function PeoplePanel(props: {
  id: string;
  room: Room;
  /** A mutation answered with the room's new participants and panes. */
  onPeople: (people: People) => void;
  /** Re-read the participants (after a removal, which answers only the room id). */
  onReload: () => void;
  /** The reader left the room: it holds nothing there any more. */
  onLeft: () => void;
}) {
  const { room } = props;
  const me = mine(room);
  const onHostSide = me.some((p) => p.seat === "HOST");
  const buyer = me.some((p) => p.key === "visitor");
  const signedIn = me.some((p) => !p.isGuest);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  // A toggle shows what was asked for until the server answers (then its word, or back).
  const [asked, setAsked] = useState<Record<string, boolean>>({});
  const shown = (what: string, stored: boolean) => asked[what] ?? stored;

  function mayRemove(p: Participant): boolean {
    if (LEADS.has(p.key)) return false;
    return onHostSide || (buyer && p.seat === "VISITOR") || p.isYou;
  }

  async function act(what: string, run: () => Promise<void>, value?: boolean) {
    setBusy(what);
    setError(null);
    if (value !== undefined) setAsked((a) => ({ ...a, [what]: value }));
    try {
      await run();
    } catch (e) {
      setError(reasonText(e));
    } finally {
      setBusy(null);
      setAsked(({ [what]: _done, ...rest }) => rest);
    }
  }

  const remove = (p: Participant) =>
    act(`remove-${p.id}`, async () => {
      await gql("RemoveParticipant", { roomId: room.id, participantId: p.id });
      setConfirming(null);
      if (p.isYou) props.onLeft();
      else props.onReload();
    });

  const share = (p: Participant, shared: boolean) =>
    act(
      `share-${p.id}`,
      async () => {
        const data = await gql<{ shareParticipantPane: People }>("ShareParticipantPane", {
          roomId: room.id,
          participantId: p.id,
          shared,
        });
        props.onPeople(data.shareParticipantPane);
      },
      shared,
    );

  const approve = (p: Participant, allowed: boolean) =>
    act(
      `approve-${p.id}`,
      async () => {
        const data = await gql<{ allowOfferApproval: People }>("AllowOfferApproval", {
          roomId: room.id,
          participantId: p.id,
          allowed,
        });
        props.onPeople(data.allowOfferApproval);
      },
      allowed,
    );

  const sides: Seat[] = ["HOST", "VISITOR"];
  return (
    <section id={props.id} class="people" aria-labelledby={`${props.id}-h`}>
      <h2 id={`${props.id}-h`}>People in this room</h2>
      {sides.map((seat) => {
        const people = room.participants.filter((p) => p.seat === seat);
        if (people.length === 0) return null;
        return (
          <div class="people-side" key={seat}>
            <h3>{sideName(seat)}</h3>
            <ul>
              {people.map((p) => (
                <li key={p.id} class="person" data-key={p.key} data-participant-id={p.id}>
                  <div class="person-name">
                    <strong>{p.displayName}</strong>
                    {p.isYou && <span class="tag">you</span>}
                    {p.key === "host" && <span class="tag">host</span>}
                    {p.key === "visitor" && <span class="tag">opened the room</span>}
                    {p.isGuest && <span class="tag">guest</span>}
                    {p.mayApprove && !buyer && <span class="tag">may approve</span>}
                    {p.sharedWithSide && !buyer && <span class="tag">pane shared</span>}
                  </div>
                  <div class="person-actions">
                    {buyer && p.seat === "VISITOR" && !LEADS.has(p.key) && (
                      <label class="switch">
                        <input
                          type="checkbox"
                          checked={shown(`approve-${p.id}`, p.mayApprove)}
                          disabled={busy !== null}
                          onChange={(e) => void approve(p, (e.target as HTMLInputElement).checked)}
                        />
                        May approve
                      </label>
                    )}
                    {buyer && p.seat === "VISITOR" && (
                      <label class="switch">
                        <input
                          type="checkbox"
                          checked={shown(`share-${p.id}`, p.sharedWithSide)}
                          disabled={busy !== null}
                          onChange={(e) => void share(p, (e.target as HTMLInputElement).checked)}
                        />
                        {p.isYou ? "Share my pane with my side" : "Share pane with my side"}
                      </label>
                    )}
                    {mayRemove(p) &&
                      (confirming === p.id ? (
                        <span class="confirm">
                          <button
                            type="button"
                            class="danger"
                            disabled={busy !== null}
                            onClick={() => void remove(p)}
                          >
                            {p.isYou ? "Yes, leave the room" : `Yes, remove ${p.displayName}`}
                          </button>
                          <button type="button" class="link" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </span>
                      ) : (
                        <button
                          type="button"
                          aria-label={p.isYou ? "Leave the room" : `Remove ${p.displayName}`}
                          onClick={() => setConfirming(p.id)}
                        >
                          {p.isYou ? "Leave" : "Remove"}
                        </button>
                      ))}
                  </div>
                </li>
              ))}
            </ul>
          </div>
        );
      })}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {room.kind === "DEAL" &&
        (signedIn ? (
          <InviteForm roomId={room.id} id={props.id} />
        ) : (
          <p class="muted small">Sign up or sign in to invite someone to your side.</p>
        ))}
    </section>
  );
}

function InviteForm(props: { roomId: string; id: string }) {
  const [email, setEmail] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<{ email: string; link: string; expiresAt: string } | null>(null);
  const [copied, setCopied] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const address = email.trim();
    if (!address || busy) return;
    setBusy(true);
    setError(null);
    setCopied(false);
    try {
      const data = await gql<{ inviteToRoom: { email: string; link: string; expiresAt: string } }>("InviteToRoom", {
        roomId: props.roomId,
        email: address,
      });
      // The server shows the link only now (it keeps a digest): an absolute one to hand over.
      const link = new URL(data.inviteToRoom.link, location.origin).href;
      setSent({ ...data.inviteToRoom, link });
      setEmail("");
    } catch (err) {
      setSent(null);
      setError(reasonText(err));
    } finally {
      setBusy(false);
    }
  }

  async function copy() {
    if (!sent) return;
    try {
      await navigator.clipboard.writeText(sent.link);
      setCopied(true);
    } catch {
      // no clipboard (an insecure origin, a refused permission): select it for a manual copy
      const input = document.getElementById(`${props.id}-link`) as HTMLInputElement | null;
      input?.select();
    }
  }

  return (
    <form class="invite" onSubmit={submit}>
      <label for={`${props.id}-email`}>Invite someone to your side</label>
      <div class="invite-row">
        <input
          id={`${props.id}-email`}
          type="email"
          required
          autoComplete="off"
          placeholder="their email address"
          value={email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || !email.trim()}>
          Invite
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {sent && (
        <div class="invite-link" role="status">
          <label for={`${props.id}-link`}>
            Invitation emailed to {sent.email}; the link works once, until {new Date(sent.expiresAt).toLocaleDateString()}. To pass it on yourself:
          </label>
          <div class="invite-row">
            <input
              id={`${props.id}-link`}
              readOnly
              value={sent.link}
              onFocus={(e) => (e.target as HTMLInputElement).select()}
            />
            <button type="button" onClick={() => void copy()}>
              {copied ? "Copied" : "Copy link"}
            </button>
          </div>
        </div>
      )}
    </form>
  );
}
