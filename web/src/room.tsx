// A room from the reader's seat: header with its stage, the written offer, and its panes —
// the reader's own (writable) and, for the host of a deal room, the visitor's (read-only).
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { LoginGate } from "./gate";
import { gql } from "./gql";
import { reconnect, watchConnection, type Connection } from "./live";
import { OfferCard, StageChip } from "./offer";
import { Pane } from "./pane";
import type { Offer, Room, Seat, Stage } from "./types";

export function RoomView(props: {
  roomId: string;
  initial?: Room;
  onActivity?: (roomId: string, cursor: string) => void;
  onMissing?: () => void;
  /** The room's stage or offer changed (the host's room list re-reads). */
  onChanged?: () => void;
  actions?: ComponentChildren;
}) {
  const { roomId } = props;
  const [room, setRoom] = useState<Room | null>(props.initial?.id === roomId ? props.initial : null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>("live");
  // The guest gate: up when the room says so (Room.loginRequired), when LoginRequiredChanged
  // arrives on the visitor pane, or when a post/approve/pay is refused with LOGIN_REQUIRED.
  const [gate, setGate] = useState<boolean>(room?.loginRequired ?? false);
  const [signedInAs, setSignedInAs] = useState<string | null>(null);
  const roomRef = useRef(room);
  roomRef.current = room;

  useEffect(() => watchConnection(setConnection), []);

  // Only the newest read is applied: one started before a sign-in must not put the gate back
  // up after the read that followed the claim.
  const loads = useRef(0);
  async function load() {
    const n = ++loads.current;
    try {
      const data = await gql<{ room: Room }>("Room", { id: roomId });
      if (n !== loads.current) return;
      setRoom(data.room);
      setGate(data.room.loginRequired);
      setError(null);
      props.onChanged?.();
    } catch (e) {
      if (n !== loads.current) return;
      if (props.onMissing) props.onMissing();
      else setError(e instanceof Error ? e.message : String(e));
    }
  }

  useEffect(() => {
    if (!(props.initial && props.initial.id === roomId)) {
      setRoom(null);
      void load();
    } else {
      setGate(props.initial.loginRequired);
    }
  }, [roomId]);

  // A signed-in visitor is never gated: a late `true` (sent before the claim) re-reads the room.
  // Read through a ref: a pane's subscription keeps the callback it was first given, and its
  // closure would still see "not signed in".
  const signedInRef = useRef<string | null>(null);
  function gateChanged(required: boolean) {
    if (required && signedInRef.current) void load();
    else setGate(required);
  }

  // Signed up or in from the gate, with the guest cookie: the server claimed this room. Re-read
  // it (loginRequired false, the new title); the streams move to a socket that carries the new
  // session, and what was held replays into the panes live.
  function signedIn(handle: string) {
    signedInRef.current = handle;
    setSignedInAs(handle);
    setGate(false);
    reconnect();
    void load();
  }

  // A StageChanged in a pane: a new offer was drawn, or the current one moved.
  function onStage(offerId: string, stage: Stage, version: number) {
    const offer = roomRef.current?.offer;
    if (!offer || offer.id !== offerId || offer.stage !== stage || offer.version !== version) void load();
  }

  function setOffer(offer: Offer) {
    setRoom((r) => (r ? { ...r, offer, stage: r.offer?.id === offer.id ? offer.stage : r.stage } : r));
    props.onChanged?.();
  }

  if (error) return <p class="error" role="alert">{error}</p>;
  if (!room) return <p class="muted">Opening the room…</p>;

  const own: Seat = room.readerSeat;
  // A home room has one pane (the host and its agent); a deal room the host reads has two.
  const others = room.kind === "HOME" ? [] : room.readableSeats.filter((s) => s !== own);
  const seats: Seat[] = [own, ...others];
  const headingFor = (seat: Seat) =>
    seat === own ? "Your conversation" : seat === "VISITOR" ? "The visitor's conversation" : "The host's conversation";
  return (
    <article class="room" data-room-id={room.id} data-kind={room.kind}>
      <header class="room-header">
        <div>
          <h1 tabIndex={-1}>{room.title}</h1>
          <p class="subtitle">{room.subtitle}</p>
        </div>
        <div class="room-meta">
          {room.kind === "DEAL" && <StageChip stage={room.stage} />}
          {connection === "reconnecting" && (
            <span class="conn" role="status">
              Reconnecting…
            </span>
          )}
          {props.actions}
        </div>
      </header>
      {gate && <LoginGate heldEffects={room.heldEffects} onSignedIn={signedIn} />}
      {signedInAs && !gate && (
        <p class="signed-in ok" role="status">
          Signed in as @{signedInAs}, in the same room.
        </p>
      )}
      {room.offer && <OfferCard offer={room.offer} onChange={setOffer} onLoginRequired={() => setGate(true)} />}
      <div class={`panes count-${seats.length}`}>
        {seats.map((seat) => (
          <Pane
            key={`${room.id}-${seat}`}
            roomId={room.id}
            seat={seat}
            writable={seat === own}
            heading={headingFor(seat)}
            onStage={onStage}
            onLoginRequired={seat === own ? gateChanged : undefined}
            onActivity={(cursor) => props.onActivity?.(room.id, cursor)}
          />
        ))}
      </div>
    </article>
  );
}
