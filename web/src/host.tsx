// The host app: the home room (where the host teaches its agent) and every deal room, listed
// with its subtitle, stage and an unread marker; a deal room opens both panes side by side.
import { useEffect, useRef, useState } from "preact/hooks";
import { Bell } from "./bell";
import { gql } from "./gql";
import { follow } from "./live";
import { navigate } from "./nav";
import { StageChip } from "./offer";
import { RoomView } from "./room";
import { Services } from "./services";
import type { Me, RoomActivity, RoomSummary } from "./types";

const SEEN = "dealroom.seen.";
const seen = (roomId: string) => localStorage.getItem(SEEN + roomId);
const markSeen = (roomId: string, cursor: string) => localStorage.setItem(SEEN + roomId, cursor);

interface RoomsData {
  rooms: { totalCount: number; edges: { node: RoomSummary }[] };
}

export function HostApp(props: { me: Me; roomId: string | null; onSignedOut: () => void }) {
  const { me } = props;
  const roomId = props.roomId ?? me.homeRoom?.id ?? null;
  const [rooms, setRooms] = useState<RoomSummary[]>([]);
  const [, setTick] = useState(0);
  // How often roomEvents named each room: the open room re-reads who is in it on a change.
  const [activity, setActivity] = useState<Record<string, number>>({});

  const latest = useRef(0);

  async function loadRooms() {
    const mine = ++latest.current; // an older read answering late must not win
    try {
      const data = await gql<RoomsData>("Rooms", { first: 50 });
      if (mine === latest.current) setRooms(data.rooms.edges.map((e) => e.node));
    } catch {
      // keep the list we have; the next activity (or RESYNC on reconnect) reads it again
    }
  }

  // The list is re-read when roomEvents says one of its rooms changed (a new room, a message, a
  // stage change), coalesced so a burst of lines reads it once; every (re)subscription starts
  // with RESYNC, so nothing missed while the socket was down stays unseen. Only if the stream
  // is refused does the page fall back to reading the list every few seconds.
  useEffect(() => {
    let pending: number | undefined;
    let fallback: number | undefined;
    const soon = () => {
      if (pending === undefined) {
        pending = window.setTimeout(() => {
          pending = undefined;
          void loadRooms();
        }, 150);
      }
    };
    void loadRooms();
    const following = follow<RoomActivity>({
      operation: "RoomEvents",
      variables: {},
      after: null,
      cursorOf: () => null,
      onEvent: (event) => {
        soon();
        const id = event.roomId;
        if (id) setActivity((seen) => ({ ...seen, [id]: (seen[id] ?? 0) + 1 }));
      },
      onError: () => {
        fallback ??= window.setInterval(() => void loadRooms(), 4000);
      },
    });
    return () => {
      following.stop();
      window.clearTimeout(pending);
      window.clearInterval(fallback);
    };
  }, []);

  // The open room is read: its newest line is seen.
  useEffect(() => {
    const open = rooms.find((r) => r.id === roomId);
    if (open?.lastMessage) markSeen(open.id, open.lastMessage.cursor);
  }, [rooms, roomId]);

  async function signOut() {
    await gql("SignOut").catch(() => undefined);
    props.onSignedOut();
  }

  const home = rooms.find((r) => r.kind === "HOME");
  const deals = rooms.filter((r) => r.kind === "DEAL");
  const unread = (r: RoomSummary) => r.id !== roomId && !!r.lastMessage && seen(r.id) !== r.lastMessage.cursor;

  return (
    <div class={`host-app ${props.roomId ? "room-open" : ""}`}>
      <aside class="sidebar" aria-label="Rooms">
        <div class="me">
          <strong>{me.displayName}</strong>
          <span class="muted small">
            Your link: <a href={`/z/${me.handle}`}>/z/{me.handle}</a>
          </span>
          <div class="me-actions">
            <Bell />
            <a href="/graphql" class="small">
              GraphiQL
            </a>
            <button type="button" class="link small" onClick={signOut}>
              Sign out
            </button>
          </div>
          <Services handle={me.handle} />
        </div>
        <nav>
          <ul class="room-list">
            {home && (
              <RoomItem room={home} current={home.id === roomId} unread={false} label="Home · teach your agent" />
            )}
          </ul>
          <h2 class="list-heading">Deal rooms ({deals.length})</h2>
          {deals.length === 0 && <p class="muted small">No deal rooms yet. Share your link.</p>}
          <ul class="room-list">
            {deals.map((room) => (
              <RoomItem key={room.id} room={room} current={room.id === roomId} unread={unread(room)} />
            ))}
          </ul>
        </nav>
      </aside>
      <main class="main">
        {props.roomId && (
          <a
            href="/"
            class="back"
            onClick={(e) => {
              e.preventDefault();
              navigate("/");
              setTick((t) => t + 1);
            }}
          >
            ‹ Rooms
          </a>
        )}
        {roomId ? (
          <RoomView
            key={roomId}
            roomId={roomId}
            onActivity={(id, cursor) => markSeen(id, cursor)}
            onChanged={() => void loadRooms()}
            activity={activity[roomId] ?? 0}
          />
        ) : (
          <p class="muted">Loading…</p>
        )}
      </main>
    </div>
  );
}

function RoomItem(props: { room: RoomSummary; current: boolean; unread: boolean; label?: string }) {
  const { room } = props;
  return (
    <li class={`room-item ${props.current ? "current" : ""}`} data-room-id={room.id}>
      <a
        href={`/r/${room.id}`}
        aria-current={props.current ? "page" : undefined}
        onClick={(e) => {
          e.preventDefault();
          navigate(`/r/${room.id}`);
        }}
      >
        <span class="room-title">
          {props.unread && (
            <span class="unread" aria-label="unread" title="New messages">
              ●
            </span>
          )}
          {props.label ?? room.title}
        </span>
        <span class="room-subtitle">{room.subtitle}</span>
        {room.kind === "DEAL" && <StageChip stage={room.stage} />}
      </a>
    </li>
  );
}
