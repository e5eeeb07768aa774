// The notification bell: the reader's unread count and, opened, its newest notifications (each
// links to its room). Re-read every few seconds and when opened; a guest (no account) has none,
// and the bell hides itself when the server says so.
import { useEffect, useState } from "preact/hooks";
import { GraphQLFailure, gql } from "./gql";
import { navigate } from "./nav";

interface Item {
  id: string;
  kind: string;
  title: string;
  body: string;
  link: string;
  read: boolean;
  createdAt: string;
}

interface ListData {
  notifications: { unreadCount: number; nodes: Item[] };
}

export function Bell() {
  const [items, setItems] = useState<Item[]>([]);
  const [unread, setUnread] = useState(0);
  const [open, setOpen] = useState(false);
  const [hidden, setHidden] = useState(false);

  async function load() {
    try {
      const data = await gql<ListData>("Notifications", { first: 20 });
      setItems(data.notifications.nodes);
      setUnread(data.notifications.unreadCount);
    } catch (e) {
      // a guest has no account: nobody to notify
      if (e instanceof GraphQLFailure && e.code === "UNAUTHENTICATED") setHidden(true);
    }
  }

  useEffect(() => {
    void load();
    const timer = window.setInterval(() => void load(), 5000);
    return () => window.clearInterval(timer);
  }, []);

  async function markAll() {
    try {
      const data = await gql<{ markNotificationsRead: number }>("MarkNotificationsRead", { ids: null });
      setUnread(data.markNotificationsRead);
      setItems((all) => all.map((n) => ({ ...n, read: true })));
    } catch {
      // the next read shows the truth
    }
  }

  function follow(e: Event, item: Item) {
    setOpen(false);
    void gql("MarkNotificationsRead", { ids: [item.id] }).then(load, () => undefined);
    // the host app's own routes navigate in place; a visitor's page is another app
    if (item.link.startsWith("/r/")) {
      e.preventDefault();
      navigate(item.link);
    }
  }

  if (hidden) return null;
  return (
    <div class="bell">
      <button
        type="button"
        class="bell-button"
        aria-expanded={open}
        aria-label={`Notifications, ${unread} unread`}
        onClick={() => {
          setOpen(!open);
          if (!open) void load();
        }}
      >
        <span aria-hidden="true">🔔</span>
        {unread > 0 && <span class="bell-count">{unread}</span>}
      </button>
      {open && (
        <div class="bell-list" role="dialog" aria-label="Notifications">
          <div class="bell-head">
            <strong>Notifications</strong>
            {unread > 0 && (
              <button type="button" class="link small" onClick={markAll}>
                Mark all read
              </button>
            )}
          </div>
          {items.length === 0 && <p class="muted small">Nothing yet.</p>}
          <ul>
            {items.map((item) => (
              <li key={item.id} class={item.read ? "read" : "unread"}>
                <a href={item.link} onClick={(e) => follow(e, item)}>
                  <span class="bell-title">{item.title}</span>
                  <span class="bell-body small">{item.body}</span>
                  <time class="muted small" dateTime={item.createdAt}>
                    {new Date(item.createdAt).toLocaleString()}
                  </time>
                </a>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
