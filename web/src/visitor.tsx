// A visitor at /z/<handle>: opens (or reuses) its deal room with the host through
// openVisitorRoom — an anonymous visitor gets a guest key as an HttpOnly cookie — and keeps
// the room in the URL (/z/<handle>/<roomId>) so a reload returns to the same room.
import { useEffect, useState } from "preact/hooks";
import { Bell } from "./bell";
import { GraphQLFailure, gql } from "./gql";
import { navigate } from "./nav";
import { RoomView } from "./room";
import type { Room } from "./types";

interface Opened {
  openVisitorRoom: { created: boolean; room: Room };
}

export function VisitorApp(props: { handle: string; roomId: string | null }) {
  const { handle } = props;
  const [room, setRoom] = useState<Room | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function open(newConversation: boolean) {
    try {
      const data = await gql<Opened>("OpenVisitorRoom", { handle, newConversation });
      const opened = data.openVisitorRoom.room;
      setRoom(opened);
      navigate(`/z/${encodeURIComponent(handle)}/${opened.id}`, true);
    } catch (e) {
      setError(
        e instanceof GraphQLFailure && e.code === "NOT_FOUND"
          ? `There is no one at /z/${handle}.`
          : e instanceof Error
            ? e.message
            : String(e),
      );
    }
  }

  useEffect(() => {
    if (props.roomId) {
      // A deep link: read that room; a room this visitor holds no seat in opens a fresh visit.
      gql<{ room: Room }>("Room", { id: props.roomId })
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
            <button type="button" class="link small" onClick={() => open(true)}>
              New conversation
            </button>
          </>
        }
      />
    </main>
  );
}
