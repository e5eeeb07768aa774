"""Written offers: reading an offer's rule state and stage, changing it (approvals, counter,
reject, add), drawing Offer-Gen's terms into a versioned offer, stage events, paying for it,
and the payment provider edge."""
