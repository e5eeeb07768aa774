"use strict";(()=>{var ye=Object.create;var U=Object.defineProperty;var be=Object.getOwnPropertyDescriptor;var ve=Object.getOwnPropertyNames;var we=Object.getPrototypeOf,Se=Object.prototype.hasOwnProperty;var T=(t,o)=>()=>{try{return o||t((o={exports:{}}).exports,o),o.exports}catch(p){throw o=0,p}};var ke=(t,o,p,l)=>{if(o&&typeof o=="object"||typeof o=="function")for(let u of ve(o))!Se.call(t,u)&&u!==p&&U(t,u,{get:()=>o[u],enumerable:!(l=be(o,u))||l.enumerable});return t};var f=(t,o,p)=>(p=t!=null?ye(we(t)):{},ke(o||!t||!t.__esModule?U(p,"default",{value:t,enumerable:!0}):p,t));var A=T((Le,_)=>{_.exports=window.dealroomShared["./gql"]});var E=T((Fe,J)=>{J.exports=window.dealroomShared["preact/hooks"]});var H=T((qe,j)=>{j.exports=window.dealroomShared["./offer"]});var Z=T((Me,X)=>{X.exports=window.dealroomShared["./nav"]});var k=T((Qe,ee)=>{ee.exports=window.dealroomShared["preact/jsx-runtime"]});var me=T((Xe,ue)=>{ue.exports=window.dealroomShared["./types"]});var he=f(A());var Y=`# The operator pages' documents (src/ops*.tsx): operators only, FORBIDDEN for anyone else.
# Validated against schema.graphql with operations.graphql by tests/test_web_documents.py.

fragment SpendFields on Spend {
  key
  calls
  inputTokens
  outputTokens
  cachedTokens
  priceUsd
  priceDisplay
  unpricedCalls
}

query OpsRooms($filter: OpsRoomFilter, $first: Int!, $after: String) {
  opsRooms(filter: $filter, first: $first, after: $after) {
    nodes {
      id
      title
      kind
      hostHandle
      stage
      lastActivityAt
      flagCount
      totalSpend { ...SpendFields }
    }
    hasNextPage
    endCursor
  }
}

fragment OpsTranscriptFields on OpsTranscript {
  seat
  nodes { id body authorKind createdAt }
  hasNextPage
}

query OpsRoom($roomId: ID!) {
  opsRoom(roomId: $roomId) {
    id
    title
    kind
    mode
    hostHandle
    stage
    lastActivityAt
    flagCount
    modelPicks
    totalSpend { ...SpendFields }
    byAgent: spend(by: AGENT) { ...SpendFields }
    byModel: spend(by: MODEL) { ...SpendFields }
    byDay: spend(by: DAY) { ...SpendFields }
    takeovers { seat operatorId takenAt lastPlan }
    runs(first: 50) {
      nodes {
        id
        agent
        pane
        status
        attempts
        noOp
        error
        verdict
        createdAt
        modelLatencyMs
        usage { ...SpendFields }
      }
      hasNextPage
    }
    goalEvents(first: 50) {
      nodes { id goalKey fromStatus toStatus byPane agent reason createdAt }
    }
    flags(first: 50) {
      nodes { id level evidence createdAt }
    }
    hostLines: transcript(seat: HOST, first: 50) { ...OpsTranscriptFields }
    visitorLines: transcript(seat: VISITOR, first: 50) { ...OpsTranscriptFields }
    memory
    memoryHistory(first: 50) {
      nodes { id path oldValue newValue agent reason createdAt }
    }
    dispatches(first: 50) {
      nodes { id fromPane toPane substance status createdAt }
    }
    offers(first: 10) { id stage status version payments { id status total currency } }
  }
  roomOps(roomId: $roomId) {
    guardVerdicts { id verdict findings edits { kind target detail } createdAt }
  }
}

mutation SetRoomModels($roomId: ID!, $picks: [ModelPickInput!]!) {
  setRoomModels(roomId: $roomId, picks: $picks) { id modelPicks }
}

mutation OverrideGoal($roomId: ID!, $key: String!, $status: String!, $reason: String!) {
  overrideGoal(roomId: $roomId, key: $key, status: $status, reason: $reason) {
    goalEvent { id toStatus }
    queuedRuns
    closedOffer
  }
}

mutation TakeOverPane($roomId: ID!, $seat: Seat!) {
  takeOverPane(roomId: $roomId, seat: $seat) { seat operatorId takenAt }
}

mutation ReleasePane($roomId: ID!, $seat: Seat!) {
  releasePane(roomId: $roomId, seat: $seat)
}

mutation OperatorPost($roomId: ID!, $seat: Seat!, $body: String!, $clientMessageId: String!) {
  operatorPost(roomId: $roomId, seat: $seat, body: $body, clientMessageId: $clientMessageId) {
    ...MessageFields
  }
}

query AgentPrompts {
  agentPrompts { name text sha256 }
}

fragment QueueItemFields on OpsQueueItem {
  id
  kind
  level
  summary
  roomId
  roomTitle
  link
  raisedAt
  ageSeconds
  acknowledgedAt
  assignee
  resolvedAt
  resolvedBy
  note
}

query OpsQueue($first: Int!, $after: String, $level: QueueLevel) {
  opsQueue(first: $first, after: $after, level: $level) {
    nodes { ...QueueItemFields }
    pageInfo { hasNextPage endCursor }
  }
}

query OpsQueueHistory($roomId: ID!) {
  opsRoom(roomId: $roomId) {
    id
    queueHistory(first: 20) { nodes { ...QueueItemFields } }
  }
}

mutation AcknowledgeQueueItem($itemId: ID!) {
  acknowledgeQueueItem(itemId: $itemId) { ...QueueItemFields }
}

mutation AssignQueueItem($itemId: ID!, $operator: String!) {
  assignQueueItem(itemId: $itemId, operator: $operator) { ...QueueItemFields }
}

mutation ResolveQueueItem($itemId: ID!, $note: String!) {
  resolveQueueItem(itemId: $itemId, note: $note) { ...QueueItemFields }
}
`;var I=f(E()),M=f(A()),ge=f(H());var w=f(E()),R=f(A());var te=f(A()),oe=f(Z()),x=f(k());function $(t){return(0,x.jsx)("a",{href:t.href,"aria-current":t.current?"page":void 0,onClick:o=>{o.preventDefault(),(0,oe.navigate)(t.href)},children:t.children})}function N(){return(0,x.jsxs)("section",{class:"forbidden",role:"alert","aria-labelledby":"ops-forbidden",children:[(0,x.jsx)("h1",{id:"ops-forbidden",children:"Operators only"}),(0,x.jsx)("p",{children:"These pages are for dealroom operators. Your account is not an operator."}),(0,x.jsx)("p",{children:(0,x.jsx)("a",{href:"/",children:"Back to your rooms"})})]})}function b(t){if((0,te.forbidden)(t.error))return(0,x.jsx)(N,{});let o=t.error instanceof Error?t.error.message:String(t.error);return(0,x.jsx)("p",{class:"error",role:"alert",children:o})}var G=["persona","distil","context_filter","offer_gen","agreement"];function D(t){return`${t.priceDisplay}${t.unpricedCalls?` + ${t.unpricedCalls} unpriced`:""}`}var v=t=>new Date(t).toLocaleString();var i=f(k()),V={FLAG:"Frustration flag",ESCALATION:"Escalation",VERDICT:"Guard audit",FAILED_RUN:"Failed run",PAYMENT:"Payment",WEBHOOK:"Webhook"};function Oe(t){return t instanceof R.GraphQLFailure&&t.code==="NOT_FOUND"?new R.GraphQLFailure("Operators only.","FORBIDDEN",{}):t}function xe(t){return t<3600?`${Math.max(1,Math.round(t/60))} min`:t<172800?`${Math.round(t/3600)} h`:`${Math.round(t/86400)} d`}function re(){let[t,o]=(0,w.useState)(""),[p,l]=(0,w.useState)(null),[u,d]=(0,w.useState)(null),[s,h]=(0,w.useState)(null);async function e(n,y){try{let c=(await(0,R.gql)("OpsQueue",{first:20,after:y,level:n||null})).opsQueue;l(g=>y&&g?[...g,...c.nodes]:c.nodes),d(c.pageInfo.hasNextPage?c.pageInfo.endCursor:null),h(null)}catch(c){h(Oe(c))}}return(0,w.useEffect)(()=>{e(t,null)},[t]),s&&!p?(0,i.jsx)(b,{error:s}):(0,i.jsxs)("section",{"aria-labelledby":"ops-queue-h",children:[(0,i.jsx)("h1",{id:"ops-queue-h",children:"Queue"}),(0,i.jsxs)("label",{class:"ops-filter",children:["Level",(0,i.jsxs)("select",{value:t,onChange:n=>o(n.target.value),children:[(0,i.jsx)("option",{value:"",children:"Every level"}),(0,i.jsx)("option",{value:"HIGH",children:"High"}),(0,i.jsx)("option",{value:"MEDIUM",children:"Medium"}),(0,i.jsx)("option",{value:"LOW",children:"Low"})]})]}),s!==null&&(0,i.jsx)(b,{error:s}),p===null?(0,i.jsx)("p",{class:"muted",children:"Loading the queue\u2026"}):p.length===0?(0,i.jsx)("p",{class:"muted",children:"Nothing needs a person."}):(0,i.jsx)("ul",{class:"ops-rooms","aria-label":"Queue items",children:p.map(n=>(0,i.jsx)($e,{item:n,onChange:()=>{e(t,null)}},n.id))}),u&&(0,i.jsx)("button",{type:"button",onClick:()=>{e(t,u)},children:"Load more"})]})}function $e(t){let{item:o}=t,[p,l]=(0,w.useState)(!1),[u,d]=(0,w.useState)(null);async function s(n,y){l(!0);try{await(0,R.gql)(n,{itemId:o.id,...y}),d(null),t.onChange()}catch(c){d(c)}finally{l(!1)}}function h(n,y){return c=>{c.preventDefault();let g=String(new FormData(c.target).get(y)??"").trim();g&&s(n,{[y]:g})}}let e=`${V[o.kind]??o.kind}: ${o.summary}`;return(0,i.jsxs)("li",{class:`ops-room-item queue-item level-${o.level.toLowerCase()}`,"data-item-id":o.id,children:[(0,i.jsxs)("span",{class:"ops-facts",children:[(0,i.jsx)("strong",{class:"queue-level",children:o.level.toLowerCase()}),(0,i.jsx)("span",{children:V[o.kind]??o.kind}),(0,i.jsxs)("span",{class:"muted small",children:["waiting ",xe(o.ageSeconds)]}),o.acknowledgedAt&&(0,i.jsx)("span",{class:"muted small",children:"acknowledged"}),o.assignee&&(0,i.jsxs)("span",{class:"small",children:["\u2192 @",o.assignee]})]}),(0,i.jsx)("span",{class:"queue-summary",children:o.summary}),o.link?(0,i.jsx)($,{href:o.link,children:o.roomTitle??"Open the room"}):(0,i.jsx)("span",{class:"muted small",children:"No room"}),(0,i.jsxs)("div",{class:"queue-actions","aria-label":`Act on: ${e}`,role:"group",children:[!o.acknowledgedAt&&(0,i.jsx)("button",{type:"button",disabled:p,onClick:()=>{s("AcknowledgeQueueItem",{})},children:"Acknowledge"}),(0,i.jsxs)("form",{class:"ops-form",onSubmit:h("AssignQueueItem","operator"),children:[(0,i.jsx)("input",{name:"operator","aria-label":"Operator handle",placeholder:"operator handle",autoCapitalize:"off"}),(0,i.jsx)("button",{type:"submit",disabled:p,children:"Assign"})]}),(0,i.jsxs)("form",{class:"ops-form",onSubmit:h("ResolveQueueItem","note"),children:[(0,i.jsx)("input",{name:"note","aria-label":"Resolution note",placeholder:"what was done"}),(0,i.jsx)("button",{type:"submit",class:"primary",disabled:p,children:"Resolve"})]})]}),u!==null&&(0,i.jsx)(b,{error:u})]})}function se(t){let[o,p]=(0,w.useState)(null),[l,u]=(0,w.useState)(null);return(0,w.useEffect)(()=>{(0,R.gql)("OpsQueueHistory",{roomId:t.roomId}).then(d=>p(d.opsRoom.queueHistory.nodes)).catch(u)},[t.roomId]),l?(0,i.jsx)(b,{error:l}):o===null?(0,i.jsx)("p",{class:"muted",children:"Loading\u2026"}):o.length===0?(0,i.jsx)("p",{class:"muted small",children:"No resolved items."}):(0,i.jsx)("ul",{class:"plain","aria-label":"Resolved queue items",children:o.map(d=>(0,i.jsxs)("li",{"data-item-id":d.id,children:[(0,i.jsx)("strong",{children:V[d.kind]??d.kind})," (",d.level.toLowerCase(),"): ",d.summary,(0,i.jsx)("br",{}),(0,i.jsxs)("span",{class:"small",children:["Resolved by @",d.resolvedBy??"?"," ",d.resolvedAt?v(d.resolvedAt):"",": ",d.note]})]},d.id))})}var q=f(E()),le=f(A()),de=f(H());var F=f(E()),P=f(A());var m=f(k());function B(){let[t,o]=(0,F.useState)(!1),[p,l]=(0,F.useState)(null),[u,d]=(0,F.useState)("");async function s(e){o(!0),d("");try{d(await e()),l(null)}catch(n){l(n)}finally{o(!1)}}return{busy:t,run:s,status:(0,m.jsxs)(m.Fragment,{children:[p!==null&&(0,m.jsx)(b,{error:p}),u&&(0,m.jsx)("p",{class:"ok small",role:"status",children:u})]})}}var K=t=>new FormData(t.target);function ae(t){let o=B();function p(l){l.preventDefault();let u=K(l),d=G.map(s=>({agent:s,model:String(u.get(s)??"").trim()}));o.run(async()=>(await(0,P.gql)("SetRoomModels",{roomId:t.roomId,picks:d}),t.onSaved(),"Models saved."))}return(0,m.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Models for this room",children:[(0,m.jsx)("p",{class:"muted small",children:"A model from the price table per agent; empty uses the configured one."}),G.map(l=>(0,m.jsxs)("label",{children:[l,(0,m.jsx)("input",{name:l,defaultValue:t.picks[l]??"",placeholder:"configured",autoCapitalize:"off"})]},l)),(0,m.jsx)("button",{type:"submit",disabled:o.busy,children:"Save models"}),o.status]})}function ne(t){let o=B();function p(l){l.preventDefault();let u=K(l),d={roomId:t.roomId,key:String(u.get("key")),status:String(u.get("status")),reason:String(u.get("reason"))};o.run(async()=>{let s=await(0,P.gql)("OverrideGoal",d);t.onDone();let h=s.overrideGoal;if(!h.goalEvent)return"The goal already had that status; nothing fired.";let e=[...h.queuedRuns.map(n=>`queued ${n}`),...h.closedOffer?["closed the offer"]:[]];return`Goal set to ${h.goalEvent.toStatus}${e.length?` (${e.join(", ")})`:""}.`})}return(0,m.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Override a goal",children:[(0,m.jsxs)("label",{children:["Goal",(0,m.jsx)("input",{name:"key",defaultValue:"new-offer",required:!0,autoCapitalize:"off"})]}),(0,m.jsxs)("label",{children:["Status",(0,m.jsx)("select",{name:"status",children:["open","met","blocked","abandoned"].map(l=>(0,m.jsx)("option",{value:l,children:l}))})]}),(0,m.jsxs)("label",{children:["Reason",(0,m.jsx)("input",{name:"reason",required:!0})]}),(0,m.jsx)("button",{type:"submit",disabled:o.busy,children:"Override goal"}),o.status]})}var Ae=["VISITOR","HOST"];function ie(t){let[o,p]=(0,F.useState)([]),l=B(),u=e=>t.takeovers.find(n=>n.seat.toUpperCase()===e),d=e=>e==="VISITOR"?"visitor":"host";function s(e,n){l.run(async()=>(await(0,P.gql)(n?"ReleasePane":"TakeOverPane",{roomId:t.roomId,seat:e}),t.onChange(),n?`The ${d(e)} pane is back with its agent.`:`You hold the ${d(e)} pane; its agent is silent.`))}function h(e,n){n.preventDefault();let y=n.target,c=String(K(n).get("body")??"").trim();c&&l.run(async()=>{let g=await(0,P.gql)("OperatorPost",{roomId:t.roomId,seat:e,body:c,clientMessageId:(0,P.newId)()});return p(O=>[...O,{...g.operatorPost,paneSeat:e}]),y.reset(),"Posted."})}return(0,m.jsxs)("div",{class:"takeover",children:[Ae.map(e=>{let n=u(e),y=o.filter(c=>c.paneSeat===e);return(0,m.jsxs)("div",{class:"takeover-seat","data-seat":e,children:[(0,m.jsxs)("h3",{children:["The ",d(e)," pane"]}),n?(0,m.jsxs)(m.Fragment,{children:[(0,m.jsxs)("p",{class:"small",children:["Taken over ",v(n.takenAt),": its agent is silent."]}),(0,m.jsxs)("p",{class:"small plan",children:["Its agent's last plan: ",n.lastPlan??"none written"]}),y.length>0&&(0,m.jsx)("ol",{class:"messages","aria-label":`Your lines in the ${d(e)} pane`,children:y.map(c=>(0,m.jsxs)("li",{"data-message-id":c.id,"data-author":c.authorKind,class:"msg left operator",children:[(0,m.jsx)("span",{class:"who",children:c.authorKind==="OPERATOR"?"Operator":c.authorKind}),(0,m.jsx)("p",{class:"body",children:c.body})]},c.id))}),(0,m.jsxs)("form",{class:"composer",onSubmit:c=>h(e,c),children:[(0,m.jsxs)("label",{class:"visually-hidden",for:`op-${e}`,children:["Say as operator in the ",d(e)," pane"]}),(0,m.jsx)("textarea",{id:`op-${e}`,name:"body",rows:2,required:!0}),(0,m.jsx)("button",{type:"submit",disabled:l.busy,children:"Post as operator"})]}),(0,m.jsxs)("button",{type:"button",disabled:l.busy,onClick:()=>s(e,!0),children:["Release the ",d(e)," pane"]})]}):(0,m.jsxs)("button",{type:"button",disabled:l.busy,onClick:()=>s(e,!1),children:["Take over the ",d(e)," pane"]})]},e)}),l.status]})}var r=f(k());function pe(t){let[o,p]=(0,q.useState)(null),[l,u]=(0,q.useState)(null);async function d(){try{p(await(0,le.gql)("OpsRoom",{roomId:t.roomId})),u(null)}catch(e){u(e)}}if((0,q.useEffect)(()=>{d()},[t.roomId]),l&&!o)return(0,r.jsx)(b,{error:l});if(!o)return(0,r.jsx)("p",{class:"muted",children:"Loading the room\u2026"});let s=o.opsRoom,h=o.roomOps.guardVerdicts;return(0,r.jsxs)("article",{class:"ops-room","data-room-id":s.id,children:[(0,r.jsx)($,{href:"/ops",children:"\u2039 Rooms"}),(0,r.jsxs)("header",{class:"ops-room-header",children:[(0,r.jsx)("h1",{children:s.title}),(0,r.jsxs)("p",{class:"muted small",children:["@",s.hostHandle," \xB7 ",s.kind.toLowerCase()," \xB7 ",s.mode.toLowerCase()," \xB7 last activity"," ",v(s.lastActivityAt)]}),s.kind.toUpperCase()==="DEAL"&&(0,r.jsx)(de.StageChip,{stage:s.stage}),(0,r.jsxs)("p",{class:"spend",children:["Spend ",D(s.totalSpend)," \xB7 ",s.totalSpend.calls," calls \xB7 ",s.flagCount," flags"]})]}),l!==null&&(0,r.jsx)(b,{error:l}),(0,r.jsx)(S,{id:"takeover",title:"Panes",children:(0,r.jsx)(ie,{roomId:s.id,takeovers:s.takeovers,onChange:d})}),(0,r.jsx)(S,{id:"runs",title:`Runs (${s.runs.nodes.length}${s.runs.hasNextPage?"+":""})`,children:(0,r.jsx)(C,{label:"Run history",head:["Agent","Pane","Status","Verdict","Tokens in/out","Price","Latency","Refusal or error","Queued"],rows:s.runs.nodes.map(e=>[e.agent,e.pane,e.attempts>1?`${e.status} (${e.attempts} tries)`:e.status,e.verdict,`${e.usage.inputTokens}/${e.usage.outputTokens}`,D(e.usage),`${e.modelLatencyMs} ms`,e.error??"",v(e.createdAt)]),rowClass:"run-row"})}),(0,r.jsxs)(S,{id:"spend",title:"Spend",children:[(0,r.jsx)(z,{label:"Spend by agent",rows:s.byAgent}),(0,r.jsx)(z,{label:"Spend by model",rows:s.byModel}),(0,r.jsx)(z,{label:"Spend by day",rows:s.byDay})]}),(0,r.jsx)(S,{id:"models",title:"Models",children:(0,r.jsx)(ae,{roomId:s.id,picks:s.modelPicks,onSaved:d})}),(0,r.jsxs)(S,{id:"goals",title:"Goal events",children:[(0,r.jsx)(C,{label:"Goal events",head:["Goal","From","To","By","Reason","When"],rows:s.goalEvents.nodes.map(e=>[e.goalKey,e.fromStatus??"",e.toStatus,`${e.agent} (${e.byPane})`,e.reason,v(e.createdAt)])}),(0,r.jsx)(ne,{roomId:s.id,onDone:d})]}),(0,r.jsx)(S,{id:"guard",title:"Guard verdicts",children:h.length===0?(0,r.jsx)("p",{class:"muted small",children:"No Guard audits yet."}):(0,r.jsx)("ul",{class:"plain",children:h.map(e=>(0,r.jsxs)("li",{children:[(0,r.jsx)("strong",{children:e.verdict})," \xB7 ",v(e.createdAt),e.findings.map(n=>(0,r.jsx)("div",{class:"small",children:n})),e.edits.map(n=>(0,r.jsxs)("div",{class:"small muted",children:[n.kind," ",n.target,": ",n.detail]}))]},e.id))})}),(0,r.jsx)(S,{id:"transcripts",title:"Transcripts",children:(0,r.jsx)("div",{class:"ops-transcripts",children:[s.hostLines,s.visitorLines].map(e=>(0,r.jsxs)("div",{class:"ops-transcript","data-seat":e.seat,role:"log","aria-label":`${e.seat} pane`,children:[(0,r.jsxs)("h3",{children:[e.seat," pane"]}),e.nodes.length===0&&(0,r.jsx)("p",{class:"muted small",children:"No lines yet."}),(0,r.jsx)("ol",{class:"plain",children:[...e.nodes].reverse().map(n=>(0,r.jsxs)("li",{class:"small",children:[(0,r.jsx)("strong",{children:n.authorKind.toLowerCase()})," ",n.body]},n.id))}),e.hasNextPage&&(0,r.jsx)("p",{class:"muted small",children:"Older lines: opsRoom.transcript(before:)."})]}))})}),(0,r.jsxs)(S,{id:"memory",title:"Room memory",children:[(0,r.jsx)("pre",{class:"ops-memory small",children:JSON.stringify(s.memory,null,2)}),(0,r.jsx)(C,{label:"Memory history",head:["Path","Old","New","By","Reason","When"],rows:s.memoryHistory.nodes.map(e=>[e.path,e.oldValue==null?"":JSON.stringify(e.oldValue),e.newValue==null?"":JSON.stringify(e.newValue),e.agent,e.reason??"",v(e.createdAt)])})]}),(0,r.jsx)(S,{id:"dispatches",title:"Dispatch record",children:(0,r.jsx)(C,{label:"Dispatches",head:["From","To","Substance","Status","When"],rows:s.dispatches.nodes.map(e=>[e.fromPane,e.toPane,e.substance,e.status,v(e.createdAt)])})}),(0,r.jsx)(S,{id:"offers",title:"Offers and payments",children:(0,r.jsx)(C,{label:"Offers",head:["Stage","Version","Payments"],rows:s.offers.map(e=>[e.stage,String(e.version),e.payments.map(n=>`${n.status} ${n.total} ${n.currency}`).join("; ")])})}),(0,r.jsx)(S,{id:"flags",title:`Flags (${s.flagCount})`,children:(0,r.jsx)(C,{label:"Frustration flags",head:["Level","Evidence","When"],rows:s.flags.nodes.map(e=>[e.level,e.evidence,v(e.createdAt)])})}),(0,r.jsx)(S,{id:"queue-history",title:"Resolved queue items",children:(0,r.jsx)(se,{roomId:s.id})})]})}function S(t){return(0,r.jsxs)("section",{class:"ops-section","aria-labelledby":`ops-${t.id}-h`,children:[(0,r.jsx)("h2",{id:`ops-${t.id}-h`,children:t.title}),t.children]})}function z(t){return(0,r.jsx)(C,{label:t.label,head:[t.label.replace("Spend by ",""),"Calls","Tokens in/out","Cached","Price"],rows:t.rows.map(o=>[o.key,String(o.calls),`${o.inputTokens}/${o.outputTokens}`,String(o.cachedTokens),D(o)])})}function C(t){return t.rows.length===0?(0,r.jsxs)("p",{class:"muted small",children:["None yet (",t.label.toLowerCase(),")."]}):(0,r.jsx)("div",{class:"table-scroll",role:"region","aria-label":t.label,tabIndex:0,children:(0,r.jsxs)("table",{children:[(0,r.jsx)("thead",{children:(0,r.jsx)("tr",{children:t.head.map(o=>(0,r.jsx)("th",{scope:"col",children:o}))})}),(0,r.jsx)("tbody",{children:t.rows.map(o=>(0,r.jsx)("tr",{class:t.rowClass,children:o.map(p=>(0,r.jsx)("td",{children:p}))}))})]})})}var ce=f(me()),a=f(k());function fe(t){let{route:o}=t;return t.me.isOperator?(0,a.jsxs)("div",{class:"ops",children:[(0,a.jsxs)("header",{class:"ops-bar",children:[(0,a.jsx)("strong",{children:"dealroom ops"}),(0,a.jsxs)("nav",{"aria-label":"Ops",children:[(0,a.jsx)($,{href:"/ops",current:o.view==="rooms",children:"Rooms"}),(0,a.jsx)($,{href:"/ops/queue",current:o.view==="queue",children:"Queue"}),(0,a.jsx)($,{href:"/ops/prompts",current:o.view==="prompts",children:"Prompts"}),(0,a.jsx)($,{href:"/",children:"Your rooms"})]}),(0,a.jsxs)("span",{class:"muted small",children:["@",t.me.handle]})]}),(0,a.jsx)("main",{class:"ops-main",children:o.view==="room"?(0,a.jsx)(pe,{roomId:o.roomId},o.roomId):o.view==="queue"?(0,a.jsx)(re,{}):o.view==="prompts"?(0,a.jsx)(Pe,{}):(0,a.jsx)(Re,{})})]}):(0,a.jsx)(N,{})}function Re(){let[t,o]=(0,I.useState)({hostHandle:"",stage:"",flagged:""}),[p,l]=(0,I.useState)(null),[u,d]=(0,I.useState)(null),[s,h]=(0,I.useState)(null),[e,n]=(0,I.useState)(!1);async function y(g,O){n(!0);try{let L={first:20,after:O,filter:{hostHandle:g.hostHandle.trim().replace(/^@/,"")||null,stage:g.stage||null,flagged:g.flagged===""?null:g.flagged==="yes"}},Q=(await(0,M.gql)("OpsRooms",L)).opsRooms;l(W=>O&&W?[...W,...Q.nodes]:Q.nodes),d(Q.hasNextPage?Q.endCursor:null),h(null)}catch(L){h(L)}finally{n(!1)}}(0,I.useEffect)(()=>{y(t,null)},[]);function c(g){g.preventDefault();let O=new FormData(g.target),L={hostHandle:String(O.get("hostHandle")??""),stage:String(O.get("stage")??""),flagged:String(O.get("flagged")??"")};o(L),y(L,null)}return s&&(0,M.forbidden)(s)?(0,a.jsx)(b,{error:s}):(0,a.jsxs)("section",{"aria-labelledby":"ops-rooms-h",children:[(0,a.jsx)("h1",{id:"ops-rooms-h",children:"Rooms"}),(0,a.jsxs)("form",{class:"ops-filter",onSubmit:c,"aria-label":"Filter rooms",children:[(0,a.jsxs)("label",{children:["Host handle",(0,a.jsx)("input",{name:"hostHandle",autoCapitalize:"off",placeholder:"any"})]}),(0,a.jsxs)("label",{children:["Stage",(0,a.jsxs)("select",{name:"stage",children:[(0,a.jsx)("option",{value:"",children:"Any stage"}),Object.entries(ce.STAGE_LABEL).map(([g,O])=>(0,a.jsx)("option",{value:g,children:O}))]})]}),(0,a.jsxs)("label",{children:["Flagged",(0,a.jsxs)("select",{name:"flagged",children:[(0,a.jsx)("option",{value:"",children:"Any"}),(0,a.jsx)("option",{value:"yes",children:"Flagged"}),(0,a.jsx)("option",{value:"no",children:"Not flagged"})]})]}),(0,a.jsx)("button",{type:"submit",class:"primary",disabled:e,children:"Filter"})]}),s!==null&&(0,a.jsx)(b,{error:s}),p===null?(0,a.jsx)("p",{class:"muted",children:"Loading rooms\u2026"}):p.length===0?(0,a.jsx)("p",{class:"muted",children:"No rooms match."}):(0,a.jsx)("ul",{class:"ops-rooms",children:p.map(g=>(0,a.jsxs)("li",{"data-room-id":g.id,class:"ops-room-item",children:[(0,a.jsx)($,{href:`/ops/rooms/${g.id}`,children:g.title}),(0,a.jsxs)("span",{class:"muted small",children:["@",g.hostHandle," \xB7 ",g.kind.toLowerCase()," \xB7 ",v(g.lastActivityAt)]}),(0,a.jsxs)("span",{class:"ops-facts",children:[g.kind.toUpperCase()==="DEAL"&&(0,a.jsx)(ge.StageChip,{stage:g.stage}),(0,a.jsxs)("span",{class:"spend",children:["Spend ",D(g.totalSpend)," \xB7 ",g.totalSpend.calls," calls"]}),(0,a.jsxs)("span",{class:g.flagCount?"flags bad":"flags",children:[g.flagCount," ",g.flagCount===1?"flag":"flags"]})]})]},g.id))}),u&&(0,a.jsx)("button",{type:"button",disabled:e,onClick:()=>{y(t,u)},children:"Load more"})]})}function Pe(){let[t,o]=(0,I.useState)(null),[p,l]=(0,I.useState)(null);return(0,I.useEffect)(()=>{(0,M.gql)("AgentPrompts").then(u=>o(u.agentPrompts)).catch(l)},[]),p?(0,a.jsx)(b,{error:p}):(0,a.jsxs)("section",{"aria-labelledby":"ops-prompts-h",children:[(0,a.jsx)("h1",{id:"ops-prompts-h",children:"Agent prompts"}),(0,a.jsx)("p",{class:"muted small",children:"Read-only: a prompt is code; its SHA-256 is the version that runs."}),t===null&&(0,a.jsx)("p",{class:"muted",children:"Loading prompts\u2026"}),t?.map(u=>(0,a.jsxs)("details",{class:"prompt",children:[(0,a.jsxs)("summary",{children:[(0,a.jsx)("strong",{children:u.name})," ",(0,a.jsxs)("code",{class:"sha",children:["sha256 ",u.sha256]})]}),(0,a.jsx)("pre",{"aria-label":`The ${u.name} prompt`,children:u.text})]},u.name))]})}(0,he.addDocuments)(Y);window.dealroomOps={OpsApp:fe};})();
