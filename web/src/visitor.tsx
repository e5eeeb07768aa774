// A visitor at /z/<handle>: opens (or reuses) its deal room with the host through
// openVisitorRoom — an anonymous visitor gets a guest key as an HttpOnly cookie — and keeps
// the room in the URL (/z/<handle>/<roomId>) so a reload returns to the same room. At
// /z/<handle>/<service> (a last part that is not a room id) the room is about that service.
import { useEffect, useState } from "preact/hooks";
import { Bell } from "./bell";
import { GraphQLFailure, gql } from "./gql";
import { navigate } from "./nav";
import { RoomView } from "./room";
import type { Room } from "./types";

interface Opened {
  openVisitorRoom: { created: boolean; room: Room };
}

const ROOM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function VisitorApp(props: { handle: string; roomId: string | null }) {
  const { handle } = props;
  const deepLink = props.roomId && ROOM_ID.test(props.roomId) ? props.roomId : null;
  const linkService = props.roomId && !deepLink ? decodeURIComponent(props.roomId) : null;
  const [room, setRoom] = useState<Room | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function open(newConversation: boolean, service: string | null = linkService) {
    try {
      const data = await gql<Opened>("OpenVisitorRoom", { handle, newConversation, service });
      const opened = data.openVisitorRoom.room;
      setRoom(opened);
      navigate(`/z/${encodeURIComponent(handle)}/${opened.id}`, true);
    } catch (e) {
      setError(
        e instanceof GraphQLFailure && e.code === "NOT_FOUND"
          ? service
            ? `${handle} does not offer ${service} here.`
            : `There is no one at /z/${handle}.`
          : e instanceof Error
            ? e.message
            : String(e),
      );
    }
  }

  useEffect(() => {
    if (deepLink) {
      // A deep link: read that room; a room this visitor holds no seat in opens a fresh visit.
      gql<{ room: Room }>("Room", { id: deepLink })
        .then((data) => setRoom(data.room))
        .catch(() => void open(false));
    } else {
      void open(false);
    }
  }, [handle]);

  if (error)
    return (
      <main class="notfound">
        <h1>Cannot open this room</h1>
        <p role="alert">{error}</p>
        <p>
          <a href="/">Go to dealroom</a>
        </p>
      </main>
    );
  if (!room) return <p class="boot">Opening your room with {handle}…</p>;
  return (
    <main class="visitor-app">
      <RoomView
        key={room.id}
        roomId={room.id}
        initial={room}
        actions={
          <>
            <Bell />
            <button
              type="button"
              class="link small"
              onClick={() => open(true, room.service ? room.service.key : null)}
            >
              New conversation
            </button>
          </>
        }
      />
    </main>
  );
}
