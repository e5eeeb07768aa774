"use strict";(()=>{var ye=Object.create;var _=Object.defineProperty;var be=Object.getOwnPropertyDescriptor;var ve=Object.getOwnPropertyNames;var we=Object.getPrototypeOf,ke=Object.prototype.hasOwnProperty;var C=(e,t)=>()=>{try{return t||e((t={exports:{}}).exports,t),t.exports}catch(p){throw t=0,p}};var Se=(e,t,p,l)=>{if(t&&typeof t=="object"||typeof t=="function")for(let m of ve(t))!ke.call(e,m)&&m!==p&&_(e,m,{get:()=>t[m],enumerable:!(l=be(t,m))||l.enumerable});return e};var h=(e,t,p)=>(p=e!=null?ye(we(e)):{},Se(t||!e||!e.__esModule?_(p,"default",{value:e,enumerable:!0}):p,e));var R=C((Le,Y)=>{Y.exports=window.dealroomShared["./gql"]});var F=C((Fe,j)=>{j.exports=window.dealroomShared["preact/hooks"]});var H=C((qe,X)=>{X.exports=window.dealroomShared["./offer"]});var ee=C((Me,Z)=>{Z.exports=window.dealroomShared["./nav"]});var I=C((Qe,te)=>{te.exports=window.dealroomShared["preact/jsx-runtime"]});var me=C((Xe,ue)=>{ue.exports=window.dealroomShared["./types"]});var he=h(R());var J=`# The operator pages' documents (src/ops*.tsx): operators only, FORBIDDEN for anyone else.
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
    paneKeys
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

query OpsPaneLines($roomId: ID!, $key: String!) {
  opsRoom(roomId: $roomId) {
    id
    lines: transcript(key: $key, first: 50) { ...OpsTranscriptFields }
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
`;var O=h(F()),M=h(R()),ce=h(H());var k=h(F()),A=h(R());var oe=h(R()),re=h(ee()),$=h(I());function x(e){return(0,$.jsx)("a",{href:e.href,"aria-current":e.current?"page":void 0,onClick:t=>{t.preventDefault(),(0,re.navigate)(e.href)},children:e.children})}function N(){return(0,$.jsxs)("section",{class:"forbidden",role:"alert","aria-labelledby":"ops-forbidden",children:[(0,$.jsx)("h1",{id:"ops-forbidden",children:"Operators only"}),(0,$.jsx)("p",{children:"These pages are for dealroom operators. Your account is not an operator."}),(0,$.jsx)("p",{children:(0,$.jsx)("a",{href:"/",children:"Back to your rooms"})})]})}function v(e){if((0,oe.forbidden)(e.error))return(0,$.jsx)(N,{});let t=e.error instanceof Error?e.error.message:String(e.error);return(0,$.jsx)("p",{class:"error",role:"alert",children:t})}var G=["persona","distil","context_filter","offer_gen","agreement"];function D(e){return`${e.priceDisplay}${e.unpricedCalls?` + ${e.unpricedCalls} unpriced`:""}`}var w=e=>new Date(e).toLocaleString();var n=h(I()),V={FLAG:"Frustration flag",ESCALATION:"Escalation",VERDICT:"Guard audit",FAILED_RUN:"Failed run",PAYMENT:"Payment",WEBHOOK:"Webhook"};function Oe(e){return e instanceof A.GraphQLFailure&&e.code==="NOT_FOUND"?new A.GraphQLFailure("Operators only.","FORBIDDEN",{}):e}function $e(e){return e<3600?`${Math.max(1,Math.round(e/60))} min`:e<172800?`${Math.round(e/3600)} h`:`${Math.round(e/86400)} d`}function se(){let[e,t]=(0,k.useState)(""),[p,l]=(0,k.useState)(null),[m,d]=(0,k.useState)(null),[f,y]=(0,k.useState)(null);async function r(g,o){try{let i=(await(0,A.gql)("OpsQueue",{first:20,after:o,level:g||null})).opsQueue;l(c=>o&&c?[...c,...i.nodes]:i.nodes),d(i.pageInfo.hasNextPage?i.pageInfo.endCursor:null),y(null)}catch(i){y(Oe(i))}}return(0,k.useEffect)(()=>{r(e,null)},[e]),f&&!p?(0,n.jsx)(v,{error:f}):(0,n.jsxs)("section",{"aria-labelledby":"ops-queue-h",children:[(0,n.jsx)("h1",{id:"ops-queue-h",children:"Queue"}),(0,n.jsxs)("label",{class:"ops-filter",children:["Level",(0,n.jsxs)("select",{value:e,onChange:g=>t(g.target.value),children:[(0,n.jsx)("option",{value:"",children:"Every level"}),(0,n.jsx)("option",{value:"HIGH",children:"High"}),(0,n.jsx)("option",{value:"MEDIUM",children:"Medium"}),(0,n.jsx)("option",{value:"LOW",children:"Low"})]})]}),f!==null&&(0,n.jsx)(v,{error:f}),p===null?(0,n.jsx)("p",{class:"muted",children:"Loading the queue\u2026"}):p.length===0?(0,n.jsx)("p",{class:"muted",children:"Nothing needs a person."}):(0,n.jsx)("ul",{class:"ops-rooms","aria-label":"Queue items",children:p.map(g=>(0,n.jsx)(xe,{item:g,onChange:()=>{r(e,null)}},g.id))}),m&&(0,n.jsx)("button",{type:"button",onClick:()=>{r(e,m)},children:"Load more"})]})}function xe(e){let{item:t}=e,[p,l]=(0,k.useState)(!1),[m,d]=(0,k.useState)(null);async function f(g,o){l(!0);try{await(0,A.gql)(g,{itemId:t.id,...o}),d(null),e.onChange()}catch(i){d(i)}finally{l(!1)}}function y(g,o){return i=>{i.preventDefault();let c=String(new FormData(i.target).get(o)??"").trim();c&&f(g,{[o]:c})}}let r=`${V[t.kind]??t.kind}: ${t.summary}`;return(0,n.jsxs)("li",{class:`ops-room-item queue-item level-${t.level.toLowerCase()}`,"data-item-id":t.id,children:[(0,n.jsxs)("span",{class:"ops-facts",children:[(0,n.jsx)("strong",{class:"queue-level",children:t.level.toLowerCase()}),(0,n.jsx)("span",{children:V[t.kind]??t.kind}),(0,n.jsxs)("span",{class:"muted small",children:["waiting ",$e(t.ageSeconds)]}),t.acknowledgedAt&&(0,n.jsx)("span",{class:"muted small",children:"acknowledged"}),t.assignee&&(0,n.jsxs)("span",{class:"small",children:["\u2192 @",t.assignee]})]}),(0,n.jsx)("span",{class:"queue-summary",children:t.summary}),t.link?(0,n.jsx)(x,{href:t.link,children:t.roomTitle??"Open the room"}):(0,n.jsx)("span",{class:"muted small",children:"No room"}),(0,n.jsxs)("div",{class:"queue-actions","aria-label":`Act on: ${r}`,role:"group",children:[!t.acknowledgedAt&&(0,n.jsx)("button",{type:"button",disabled:p,onClick:()=>{f("AcknowledgeQueueItem",{})},children:"Acknowledge"}),(0,n.jsxs)("form",{class:"ops-form",onSubmit:y("AssignQueueItem","operator"),children:[(0,n.jsx)("input",{name:"operator","aria-label":"Operator handle",placeholder:"operator handle",autoCapitalize:"off"}),(0,n.jsx)("button",{type:"submit",disabled:p,children:"Assign"})]}),(0,n.jsxs)("form",{class:"ops-form",onSubmit:y("ResolveQueueItem","note"),children:[(0,n.jsx)("input",{name:"note","aria-label":"Resolution note",placeholder:"what was done"}),(0,n.jsx)("button",{type:"submit",class:"primary",disabled:p,children:"Resolve"})]})]}),m!==null&&(0,n.jsx)(v,{error:m})]})}function ae(e){let[t,p]=(0,k.useState)(null),[l,m]=(0,k.useState)(null);return(0,k.useEffect)(()=>{(0,A.gql)("OpsQueueHistory",{roomId:e.roomId}).then(d=>p(d.opsRoom.queueHistory.nodes)).catch(m)},[e.roomId]),l?(0,n.jsx)(v,{error:l}):t===null?(0,n.jsx)("p",{class:"muted",children:"Loading\u2026"}):t.length===0?(0,n.jsx)("p",{class:"muted small",children:"No resolved items."}):(0,n.jsx)("ul",{class:"plain","aria-label":"Resolved queue items",children:t.map(d=>(0,n.jsxs)("li",{"data-item-id":d.id,children:[(0,n.jsx)("strong",{children:V[d.kind]??d.kind})," (",d.level.toLowerCase(),"): ",d.summary,(0,n.jsx)("br",{}),(0,n.jsxs)("span",{class:"small",children:["Resolved by @",d.resolvedBy??"?"," ",d.resolvedAt?w(d.resolvedAt):"",": ",d.note]})]},d.id))})}var E=h(F()),W=h(R()),de=h(H());var q=h(F()),P=h(R());var u=h(I());function K(){let[e,t]=(0,q.useState)(!1),[p,l]=(0,q.useState)(null),[m,d]=(0,q.useState)("");async function f(r){t(!0),d("");try{d(await r()),l(null)}catch(g){l(g)}finally{t(!1)}}return{busy:e,run:f,status:(0,u.jsxs)(u.Fragment,{children:[p!==null&&(0,u.jsx)(v,{error:p}),m&&(0,u.jsx)("p",{class:"ok small",role:"status",children:m})]})}}var B=e=>new FormData(e.target);function ne(e){let t=K();function p(l){l.preventDefault();let m=B(l),d=G.map(f=>({agent:f,model:String(m.get(f)??"").trim()}));t.run(async()=>(await(0,P.gql)("SetRoomModels",{roomId:e.roomId,picks:d}),e.onSaved(),"Models saved."))}return(0,u.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Models for this room",children:[(0,u.jsx)("p",{class:"muted small",children:"A model from the price table per agent; empty uses the configured one."}),G.map(l=>(0,u.jsxs)("label",{children:[l,(0,u.jsx)("input",{name:l,defaultValue:e.picks[l]??"",placeholder:"configured",autoCapitalize:"off"})]},l)),(0,u.jsx)("button",{type:"submit",disabled:t.busy,children:"Save models"}),t.status]})}function ie(e){let t=K();function p(l){l.preventDefault();let m=B(l),d={roomId:e.roomId,key:String(m.get("key")),status:String(m.get("status")),reason:String(m.get("reason"))};t.run(async()=>{let f=await(0,P.gql)("OverrideGoal",d);e.onDone();let y=f.overrideGoal;if(!y.goalEvent)return"The goal already had that status; nothing fired.";let r=[...y.queuedRuns.map(g=>`queued ${g}`),...y.closedOffer?["closed the offer"]:[]];return`Goal set to ${y.goalEvent.toStatus}${r.length?` (${r.join(", ")})`:""}.`})}return(0,u.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Override a goal",children:[(0,u.jsxs)("label",{children:["Goal",(0,u.jsx)("input",{name:"key",defaultValue:"new-offer",required:!0,autoCapitalize:"off"})]}),(0,u.jsxs)("label",{children:["Status",(0,u.jsx)("select",{name:"status",children:["open","met","blocked","abandoned"].map(l=>(0,u.jsx)("option",{value:l,children:l}))})]}),(0,u.jsxs)("label",{children:["Reason",(0,u.jsx)("input",{name:"reason",required:!0})]}),(0,u.jsx)("button",{type:"submit",disabled:t.busy,children:"Override goal"}),t.status]})}var Re=["VISITOR","HOST"];function le(e){let[t,p]=(0,q.useState)([]),l=K(),m=r=>e.takeovers.find(g=>g.seat.toUpperCase()===r),d=r=>r==="VISITOR"?"visitor":"host";function f(r,g){l.run(async()=>(await(0,P.gql)(g?"ReleasePane":"TakeOverPane",{roomId:e.roomId,seat:r}),e.onChange(),g?`The ${d(r)} pane is back with its agent.`:`You hold the ${d(r)} pane; its agent is silent.`))}function y(r,g){g.preventDefault();let o=g.target,i=String(B(g).get("body")??"").trim();i&&l.run(async()=>{let c=await(0,P.gql)("OperatorPost",{roomId:e.roomId,seat:r,body:i,clientMessageId:(0,P.newId)()});return p(b=>[...b,{...c.operatorPost,paneSeat:r}]),o.reset(),"Posted."})}return(0,u.jsxs)("div",{class:"takeover",children:[Re.map(r=>{let g=m(r),o=t.filter(i=>i.paneSeat===r);return(0,u.jsxs)("div",{class:"takeover-seat","data-seat":r,children:[(0,u.jsxs)("h3",{children:["The ",d(r)," pane"]}),g?(0,u.jsxs)(u.Fragment,{children:[(0,u.jsxs)("p",{class:"small",children:["Taken over ",w(g.takenAt),": its agent is silent."]}),(0,u.jsxs)("p",{class:"small plan",children:["Its agent's last plan: ",g.lastPlan??"none written"]}),o.length>0&&(0,u.jsx)("ol",{class:"messages","aria-label":`Your lines in the ${d(r)} pane`,children:o.map(i=>(0,u.jsxs)("li",{"data-message-id":i.id,"data-author":i.authorKind,class:"msg left operator",children:[(0,u.jsx)("span",{class:"who",children:i.authorKind==="OPERATOR"?"Operator":i.authorKind}),(0,u.jsx)("p",{class:"body",children:i.body})]},i.id))}),(0,u.jsxs)("form",{class:"composer",onSubmit:i=>y(r,i),children:[(0,u.jsxs)("label",{class:"visually-hidden",for:`op-${r}`,children:["Say as operator in the ",d(r)," pane"]}),(0,u.jsx)("textarea",{id:`op-${r}`,name:"body",rows:2,required:!0}),(0,u.jsx)("button",{type:"submit",disabled:l.busy,children:"Post as operator"})]}),(0,u.jsxs)("button",{type:"button",disabled:l.busy,onClick:()=>f(r,!0),children:["Release the ",d(r)," pane"]})]}):(0,u.jsxs)("button",{type:"button",disabled:l.busy,onClick:()=>f(r,!1),children:["Take over the ",d(r)," pane"]})]},r)}),l.status]})}var s=h(I());function pe(e){let[t,p]=(0,E.useState)(null),[l,m]=(0,E.useState)([]),[d,f]=(0,E.useState)(null);async function y(){try{let o=await(0,W.gql)("OpsRoom",{roomId:e.roomId});p(o);let i=o.opsRoom.paneKeys.filter(b=>b!=="host"&&b!=="visitor"),c=await Promise.all(i.map(b=>(0,W.gql)("OpsPaneLines",{roomId:e.roomId,key:b})));m(c.map(b=>b.opsRoom.lines)),f(null)}catch(o){f(o)}}if((0,E.useEffect)(()=>{y()},[e.roomId]),d&&!t)return(0,s.jsx)(v,{error:d});if(!t)return(0,s.jsx)("p",{class:"muted",children:"Loading the room\u2026"});let r=t.opsRoom,g=t.roomOps.guardVerdicts;return(0,s.jsxs)("article",{class:"ops-room","data-room-id":r.id,children:[(0,s.jsx)(x,{href:"/ops",children:"\u2039 Rooms"}),(0,s.jsxs)("header",{class:"ops-room-header",children:[(0,s.jsx)("h1",{children:r.title}),(0,s.jsxs)("p",{class:"muted small",children:["@",r.hostHandle," \xB7 ",r.kind.toLowerCase()," \xB7 ",r.mode.toLowerCase()," \xB7 last activity"," ",w(r.lastActivityAt)]}),r.kind.toUpperCase()==="DEAL"&&(0,s.jsx)(de.StageChip,{stage:r.stage}),(0,s.jsxs)("p",{class:"spend",children:["Spend ",D(r.totalSpend)," \xB7 ",r.totalSpend.calls," calls \xB7 ",r.flagCount," flags"]})]}),d!==null&&(0,s.jsx)(v,{error:d}),(0,s.jsx)(S,{id:"takeover",title:"Panes",children:(0,s.jsx)(le,{roomId:r.id,takeovers:r.takeovers,onChange:y})}),(0,s.jsx)(S,{id:"runs",title:`Runs (${r.runs.nodes.length}${r.runs.hasNextPage?"+":""})`,children:(0,s.jsx)(T,{label:"Run history",head:["Agent","Pane","Status","Verdict","Tokens in/out","Price","Latency","Refusal or error","Queued"],rows:r.runs.nodes.map(o=>[o.agent,o.pane,o.attempts>1?`${o.status} (${o.attempts} tries)`:o.status,o.verdict,`${o.usage.inputTokens}/${o.usage.outputTokens}`,D(o.usage),`${o.modelLatencyMs} ms`,o.error??"",w(o.createdAt)]),rowClass:"run-row"})}),(0,s.jsxs)(S,{id:"spend",title:"Spend",children:[(0,s.jsx)(z,{label:"Spend by agent",rows:r.byAgent}),(0,s.jsx)(z,{label:"Spend by model",rows:r.byModel}),(0,s.jsx)(z,{label:"Spend by day",rows:r.byDay})]}),(0,s.jsx)(S,{id:"models",title:"Models",children:(0,s.jsx)(ne,{roomId:r.id,picks:r.modelPicks,onSaved:y})}),(0,s.jsxs)(S,{id:"goals",title:"Goal events",children:[(0,s.jsx)(T,{label:"Goal events",head:["Goal","From","To","By","Reason","When"],rows:r.goalEvents.nodes.map(o=>[o.goalKey,o.fromStatus??"",o.toStatus,`${o.agent} (${o.byPane})`,o.reason,w(o.createdAt)])}),(0,s.jsx)(ie,{roomId:r.id,onDone:y})]}),(0,s.jsx)(S,{id:"guard",title:"Guard verdicts",children:g.length===0?(0,s.jsx)("p",{class:"muted small",children:"No Guard audits yet."}):(0,s.jsx)("ul",{class:"plain",children:g.map(o=>(0,s.jsxs)("li",{children:[(0,s.jsx)("strong",{children:o.verdict})," \xB7 ",w(o.createdAt),o.findings.map(i=>(0,s.jsx)("div",{class:"small",children:i})),o.edits.map(i=>(0,s.jsxs)("div",{class:"small muted",children:[i.kind," ",i.target,": ",i.detail]}))]},o.id))})}),(0,s.jsx)(S,{id:"transcripts",title:"Transcripts",children:(0,s.jsx)("div",{class:"ops-transcripts",children:[r.hostLines,r.visitorLines,...l].map(o=>(0,s.jsxs)("div",{class:"ops-transcript","data-seat":o.seat,role:"log","aria-label":`${o.seat} pane`,children:[(0,s.jsxs)("h3",{children:[o.seat," pane"]}),o.nodes.length===0&&(0,s.jsx)("p",{class:"muted small",children:"No lines yet."}),(0,s.jsx)("ol",{class:"plain",children:[...o.nodes].reverse().map(i=>(0,s.jsxs)("li",{class:"small",children:[(0,s.jsx)("strong",{children:i.authorKind.toLowerCase()})," ",i.body]},i.id))}),o.hasNextPage&&(0,s.jsx)("p",{class:"muted small",children:"Older lines: opsRoom.transcript(before:)."})]}))})}),(0,s.jsxs)(S,{id:"memory",title:"Room memory",children:[(0,s.jsx)("pre",{class:"ops-memory small",children:JSON.stringify(r.memory,null,2)}),(0,s.jsx)(T,{label:"Memory history",head:["Path","Old","New","By","Reason","When"],rows:r.memoryHistory.nodes.map(o=>[o.path,o.oldValue==null?"":JSON.stringify(o.oldValue),o.newValue==null?"":JSON.stringify(o.newValue),o.agent,o.reason??"",w(o.createdAt)])})]}),(0,s.jsx)(S,{id:"dispatches",title:"Dispatch record",children:(0,s.jsx)(T,{label:"Dispatches",head:["From","To","Substance","Status","When"],rows:r.dispatches.nodes.map(o=>[o.fromPane,o.toPane,o.substance,o.status,w(o.createdAt)])})}),(0,s.jsx)(S,{id:"offers",title:"Offers and payments",children:(0,s.jsx)(T,{label:"Offers",head:["Stage","Version","Payments"],rows:r.offers.map(o=>[o.stage,String(o.version),o.payments.map(i=>`${i.status} ${i.total} ${i.currency}`).join("; ")])})}),(0,s.jsx)(S,{id:"flags",title:`Flags (${r.flagCount})`,children:(0,s.jsx)(T,{label:"Frustration flags",head:["Level","Evidence","When"],rows:r.flags.nodes.map(o=>[o.level,o.evidence,w(o.createdAt)])})}),(0,s.jsx)(S,{id:"queue-history",title:"Resolved queue items",children:(0,s.jsx)(ae,{roomId:r.id})})]})}function S(e){return(0,s.jsxs)("section",{class:"ops-section","aria-labelledby":`ops-${e.id}-h`,children:[(0,s.jsx)("h2",{id:`ops-${e.id}-h`,children:e.title}),e.children]})}function z(e){return(0,s.jsx)(T,{label:e.label,head:[e.label.replace("Spend by ",""),"Calls","Tokens in/out","Cached","Price"],rows:e.rows.map(t=>[t.key,String(t.calls),`${t.inputTokens}/${t.outputTokens}`,String(t.cachedTokens),D(t)])})}function T(e){return e.rows.length===0?(0,s.jsxs)("p",{class:"muted small",children:["None yet (",e.label.toLowerCase(),")."]}):(0,s.jsx)("div",{class:"table-scroll",role:"region","aria-label":e.label,tabIndex:0,children:(0,s.jsxs)("table",{children:[(0,s.jsx)("thead",{children:(0,s.jsx)("tr",{children:e.head.map(t=>(0,s.jsx)("th",{scope:"col",children:t}))})}),(0,s.jsx)("tbody",{children:e.rows.map(t=>(0,s.jsx)("tr",{class:e.rowClass,children:t.map(p=>(0,s.jsx)("td",{children:p}))}))})]})})}var ge=h(me()),a=h(I());function fe(e){let{route:t}=e;return e.me.isOperator?(0,a.jsxs)("div",{class:"ops",children:[(0,a.jsxs)("header",{class:"ops-bar",children:[(0,a.jsx)("strong",{children:"dealroom ops"}),(0,a.jsxs)("nav",{"aria-label":"Ops",children:[(0,a.jsx)(x,{href:"/ops",current:t.view==="rooms",children:"Rooms"}),(0,a.jsx)(x,{href:"/ops/queue",current:t.view==="queue",children:"Queue"}),(0,a.jsx)(x,{href:"/ops/prompts",current:t.view==="prompts",children:"Prompts"}),(0,a.jsx)(x,{href:"/",children:"Your rooms"})]}),(0,a.jsxs)("span",{class:"muted small",children:["@",e.me.handle]})]}),(0,a.jsx)("main",{class:"ops-main",children:t.view==="room"?(0,a.jsx)(pe,{roomId:t.roomId},t.roomId):t.view==="queue"?(0,a.jsx)(se,{}):t.view==="prompts"?(0,a.jsx)(Pe,{}):(0,a.jsx)(Ae,{})})]}):(0,a.jsx)(N,{})}function Ae(){let[e,t]=(0,O.useState)({hostHandle:"",stage:"",flagged:""}),[p,l]=(0,O.useState)(null),[m,d]=(0,O.useState)(null),[f,y]=(0,O.useState)(null),[r,g]=(0,O.useState)(!1);async function o(c,b){g(!0);try{let L={first:20,after:b,filter:{hostHandle:c.hostHandle.trim().replace(/^@/,"")||null,stage:c.stage||null,flagged:c.flagged===""?null:c.flagged==="yes"}},Q=(await(0,M.gql)("OpsRooms",L)).opsRooms;l(U=>b&&U?[...U,...Q.nodes]:Q.nodes),d(Q.hasNextPage?Q.endCursor:null),y(null)}catch(L){y(L)}finally{g(!1)}}(0,O.useEffect)(()=>{o(e,null)},[]);function i(c){c.preventDefault();let b=new FormData(c.target),L={hostHandle:String(b.get("hostHandle")??""),stage:String(b.get("stage")??""),flagged:String(b.get("flagged")??"")};t(L),o(L,null)}return f&&(0,M.forbidden)(f)?(0,a.jsx)(v,{error:f}):(0,a.jsxs)("section",{"aria-labelledby":"ops-rooms-h",children:[(0,a.jsx)("h1",{id:"ops-rooms-h",children:"Rooms"}),(0,a.jsxs)("form",{class:"ops-filter",onSubmit:i,"aria-label":"Filter rooms",children:[(0,a.jsxs)("label",{children:["Host handle",(0,a.jsx)("input",{name:"hostHandle",autoCapitalize:"off",placeholder:"any"})]}),(0,a.jsxs)("label",{children:["Stage",(0,a.jsxs)("select",{name:"stage",children:[(0,a.jsx)("option",{value:"",children:"Any stage"}),Object.entries(ge.STAGE_LABEL).map(([c,b])=>(0,a.jsx)("option",{value:c,children:b}))]})]}),(0,a.jsxs)("label",{children:["Flagged",(0,a.jsxs)("select",{name:"flagged",children:[(0,a.jsx)("option",{value:"",children:"Any"}),(0,a.jsx)("option",{value:"yes",children:"Flagged"}),(0,a.jsx)("option",{value:"no",children:"Not flagged"})]})]}),(0,a.jsx)("button",{type:"submit",class:"primary",disabled:r,children:"Filter"})]}),f!==null&&(0,a.jsx)(v,{error:f}),p===null?(0,a.jsx)("p",{class:"muted",children:"Loading rooms\u2026"}):p.length===0?(0,a.jsx)("p",{class:"muted",children:"No rooms match."}):(0,a.jsx)("ul",{class:"ops-rooms",children:p.map(c=>(0,a.jsxs)("li",{"data-room-id":c.id,class:"ops-room-item",children:[(0,a.jsx)(x,{href:`/ops/rooms/${c.id}`,children:c.title}),(0,a.jsxs)("span",{class:"muted small",children:["@",c.hostHandle," \xB7 ",c.kind.toLowerCase()," \xB7 ",w(c.lastActivityAt)]}),(0,a.jsxs)("span",{class:"ops-facts",children:[c.kind.toUpperCase()==="DEAL"&&(0,a.jsx)(ce.StageChip,{stage:c.stage}),(0,a.jsxs)("span",{class:"spend",children:["Spend ",D(c.totalSpend)," \xB7 ",c.totalSpend.calls," calls"]}),(0,a.jsxs)("span",{class:c.flagCount?"flags bad":"flags",children:[c.flagCount," ",c.flagCount===1?"flag":"flags"]})]})]},c.id))}),m&&(0,a.jsx)("button",{type:"button",disabled:r,onClick:()=>{o(e,m)},children:"Load more"})]})}function Pe(){let[e,t]=(0,O.useState)(null),[p,l]=(0,O.useState)(null);return(0,O.useEffect)(()=>{(0,M.gql)("AgentPrompts").then(m=>t(m.agentPrompts)).catch(l)},[]),p?(0,a.jsx)(v,{error:p}):(0,a.jsxs)("section",{"aria-labelledby":"ops-prompts-h",children:[(0,a.jsx)("h1",{id:"ops-prompts-h",children:"Agent prompts"}),(0,a.jsx)("p",{class:"muted small",children:"Read-only: a prompt is code; its SHA-256 is the version that runs."}),e===null&&(0,a.jsx)("p",{class:"muted",children:"Loading prompts\u2026"}),e?.map(m=>(0,a.jsxs)("details",{class:"prompt",children:[(0,a.jsxs)("summary",{children:[(0,a.jsx)("strong",{children:m.name})," ",(0,a.jsxs)("code",{class:"sha",children:["sha256 ",m.sha256]})]}),(0,a.jsx)("pre",{"aria-label":`The ${m.name} prompt`,children:m.text})]},m.name))]})}(0,he.addDocuments)(J);window.dealroomOps={OpsApp:fe};})();
