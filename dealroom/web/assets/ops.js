"use strict";(()=>{var pe=Object.create;var K=Object.defineProperty;var me=Object.getOwnPropertyDescriptor;var ue=Object.getOwnPropertyNames;var ge=Object.getPrototypeOf,ce=Object.prototype.hasOwnProperty;var P=(t,r)=>()=>{try{return r||t((r={exports:{}}).exports,r),r.exports}catch(p){throw r=0,p}};var fe=(t,r,p,i)=>{if(r&&typeof r=="object"||typeof r=="function")for(let d of ue(r))!ce.call(t,d)&&d!==p&&K(t,d,{get:()=>r[d],enumerable:!(i=me(r,d))||i.enumerable});return t};var g=(t,r,p)=>(p=t!=null?pe(ge(t)):{},fe(r||!t||!t.__esModule?K(p,"default",{value:t,enumerable:!0}):p,t));var A=P((we,z)=>{z.exports=window.dealroomShared["./gql"]});var F=P(($e,W)=>{W.exports=window.dealroomShared["preact/hooks"]});var M=P((Ie,U)=>{U.exports=window.dealroomShared["./offer"]});var _=P((Re,Y)=>{Y.exports=window.dealroomShared["./nav"]});var S=P((Pe,J)=>{J.exports=window.dealroomShared["preact/jsx-runtime"]});var se=P((Ne,ae)=>{ae.exports=window.dealroomShared["./types"]});var de=g(A());var B=`# The operator pages' documents (src/ops*.tsx): operators only, FORBIDDEN for anyone else.
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
    takeovers { seat operatorId takenAt }
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
`;var b=g(F()),D=g(A()),ne=g(M());var L=g(F()),te=g(A()),oe=g(M());var j=g(A()),Q=g(_()),w=g(S());function O(t){return(0,w.jsx)("a",{href:t.href,"aria-current":t.current?"page":void 0,onClick:r=>{r.preventDefault(),(0,Q.navigate)(t.href)},children:t.children})}function k(t){if((0,j.forbidden)(t.error))return(0,w.jsxs)("section",{class:"forbidden",role:"alert","aria-labelledby":"ops-forbidden",children:[(0,w.jsx)("h1",{id:"ops-forbidden",children:"Operators only"}),(0,w.jsx)("p",{children:"These pages are for dealroom operators. Your account is not an operator."}),(0,w.jsx)("p",{children:(0,w.jsx)("a",{href:"/",children:"Back to your rooms"})})]});let r=t.error instanceof Error?t.error.message:String(t.error);return(0,w.jsx)("p",{class:"error",role:"alert",children:r})}var C=g(F()),$=g(A());var H=["persona","distil","context_filter","offer_gen","agreement"];function T(t){return`${t.priceDisplay}${t.unpricedCalls?` + ${t.unpricedCalls} unpriced`:""}`}var h=t=>new Date(t).toLocaleString();var n=g(S());function N(){let[t,r]=(0,C.useState)(!1),[p,i]=(0,C.useState)(null),[d,u]=(0,C.useState)("");async function s(e){r(!0),u("");try{u(await e()),i(null)}catch(l){i(l)}finally{r(!1)}}return{busy:t,run:s,status:(0,n.jsxs)(n.Fragment,{children:[p!==null&&(0,n.jsx)(k,{error:p}),d&&(0,n.jsx)("p",{class:"ok small",role:"status",children:d})]})}}var V=t=>new FormData(t.target);function X(t){let r=N();function p(i){i.preventDefault();let d=V(i),u=H.map(s=>({agent:s,model:String(d.get(s)??"").trim()}));r.run(async()=>(await(0,$.gql)("SetRoomModels",{roomId:t.roomId,picks:u}),t.onSaved(),"Models saved."))}return(0,n.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Models for this room",children:[(0,n.jsx)("p",{class:"muted small",children:"A model from the price table per agent; empty uses the configured one."}),H.map(i=>(0,n.jsxs)("label",{children:[i,(0,n.jsx)("input",{name:i,defaultValue:t.picks[i]??"",placeholder:"configured",autoCapitalize:"off"})]},i)),(0,n.jsx)("button",{type:"submit",disabled:r.busy,children:"Save models"}),r.status]})}function Z(t){let r=N();function p(i){i.preventDefault();let d=V(i),u={roomId:t.roomId,key:String(d.get("key")),status:String(d.get("status")),reason:String(d.get("reason"))};r.run(async()=>{let s=await(0,$.gql)("OverrideGoal",u);t.onDone();let f=s.overrideGoal;if(!f.goalEvent)return"The goal already had that status; nothing fired.";let e=[...f.queuedRuns.map(l=>`queued ${l}`),...f.closedOffer?["closed the offer"]:[]];return`Goal set to ${f.goalEvent.toStatus}${e.length?` (${e.join(", ")})`:""}.`})}return(0,n.jsxs)("form",{class:"ops-form",onSubmit:p,"aria-label":"Override a goal",children:[(0,n.jsxs)("label",{children:["Goal",(0,n.jsx)("input",{name:"key",defaultValue:"new-offer",required:!0,autoCapitalize:"off"})]}),(0,n.jsxs)("label",{children:["Status",(0,n.jsx)("select",{name:"status",children:["open","met","blocked","abandoned"].map(i=>(0,n.jsx)("option",{value:i,children:i}))})]}),(0,n.jsxs)("label",{children:["Reason",(0,n.jsx)("input",{name:"reason",required:!0})]}),(0,n.jsx)("button",{type:"submit",disabled:r.busy,children:"Override goal"}),r.status]})}var ye=["VISITOR","HOST"];function ee(t){let[r,p]=(0,C.useState)([]),i=N(),d=e=>t.takeovers.find(l=>l.seat.toUpperCase()===e),u=e=>e==="VISITOR"?"visitor":"host";function s(e,l){i.run(async()=>(await(0,$.gql)(l?"ReleasePane":"TakeOverPane",{roomId:t.roomId,seat:e}),t.onChange(),l?`The ${u(e)} pane is back with its agent.`:`You hold the ${u(e)} pane; its agent is silent.`))}function f(e,l){l.preventDefault();let x=l.target,c=String(V(l).get("body")??"").trim();c&&i.run(async()=>{let m=await(0,$.gql)("OperatorPost",{roomId:t.roomId,seat:e,body:c,clientMessageId:(0,$.newId)()});return p(v=>[...v,{...m.operatorPost,paneSeat:e}]),x.reset(),"Posted."})}return(0,n.jsxs)("div",{class:"takeover",children:[ye.map(e=>{let l=d(e),x=r.filter(c=>c.paneSeat===e);return(0,n.jsxs)("div",{class:"takeover-seat","data-seat":e,children:[(0,n.jsxs)("h3",{children:["The ",u(e)," pane"]}),l?(0,n.jsxs)(n.Fragment,{children:[(0,n.jsxs)("p",{class:"small",children:["Taken over ",h(l.takenAt),": its agent is silent."]}),x.length>0&&(0,n.jsx)("ol",{class:"messages","aria-label":`Your lines in the ${u(e)} pane`,children:x.map(c=>(0,n.jsxs)("li",{"data-message-id":c.id,"data-author":c.authorKind,class:"msg left operator",children:[(0,n.jsx)("span",{class:"who",children:c.authorKind==="OPERATOR"?"Operator":c.authorKind}),(0,n.jsx)("p",{class:"body",children:c.body})]},c.id))}),(0,n.jsxs)("form",{class:"composer",onSubmit:c=>f(e,c),children:[(0,n.jsxs)("label",{class:"visually-hidden",for:`op-${e}`,children:["Say as operator in the ",u(e)," pane"]}),(0,n.jsx)("textarea",{id:`op-${e}`,name:"body",rows:2,required:!0}),(0,n.jsx)("button",{type:"submit",disabled:i.busy,children:"Post as operator"})]}),(0,n.jsxs)("button",{type:"button",disabled:i.busy,onClick:()=>s(e,!0),children:["Release the ",u(e)," pane"]})]}):(0,n.jsxs)("button",{type:"button",disabled:i.busy,onClick:()=>s(e,!1),children:["Take over the ",u(e)," pane"]})]},e)}),i.status]})}var o=g(S());function re(t){let[r,p]=(0,L.useState)(null),[i,d]=(0,L.useState)(null);async function u(){try{p(await(0,te.gql)("OpsRoom",{roomId:t.roomId})),d(null)}catch(e){d(e)}}if((0,L.useEffect)(()=>{u()},[t.roomId]),i&&!r)return(0,o.jsx)(k,{error:i});if(!r)return(0,o.jsx)("p",{class:"muted",children:"Loading the room\u2026"});let s=r.opsRoom,f=r.roomOps.guardVerdicts;return(0,o.jsxs)("article",{class:"ops-room","data-room-id":s.id,children:[(0,o.jsx)(O,{href:"/ops",children:"\u2039 Rooms"}),(0,o.jsxs)("header",{class:"ops-room-header",children:[(0,o.jsx)("h1",{children:s.title}),(0,o.jsxs)("p",{class:"muted small",children:["@",s.hostHandle," \xB7 ",s.kind.toLowerCase()," \xB7 ",s.mode.toLowerCase()," \xB7 last activity"," ",h(s.lastActivityAt)]}),s.kind.toUpperCase()==="DEAL"&&(0,o.jsx)(oe.StageChip,{stage:s.stage}),(0,o.jsxs)("p",{class:"spend",children:["Spend ",T(s.totalSpend)," \xB7 ",s.totalSpend.calls," calls \xB7 ",s.flagCount," flags"]})]}),i!==null&&(0,o.jsx)(k,{error:i}),(0,o.jsx)(y,{id:"takeover",title:"Panes",children:(0,o.jsx)(ee,{roomId:s.id,takeovers:s.takeovers,onChange:u})}),(0,o.jsx)(y,{id:"runs",title:`Runs (${s.runs.nodes.length}${s.runs.hasNextPage?"+":""})`,children:(0,o.jsx)(I,{label:"Run history",head:["Agent","Pane","Status","Verdict","Tokens in/out","Price","Latency","Refusal or error","Queued"],rows:s.runs.nodes.map(e=>[e.agent,e.pane,e.attempts>1?`${e.status} (${e.attempts} tries)`:e.status,e.verdict,`${e.usage.inputTokens}/${e.usage.outputTokens}`,T(e.usage),`${e.modelLatencyMs} ms`,e.error??"",h(e.createdAt)]),rowClass:"run-row"})}),(0,o.jsxs)(y,{id:"spend",title:"Spend",children:[(0,o.jsx)(G,{label:"Spend by agent",rows:s.byAgent}),(0,o.jsx)(G,{label:"Spend by model",rows:s.byModel}),(0,o.jsx)(G,{label:"Spend by day",rows:s.byDay})]}),(0,o.jsx)(y,{id:"models",title:"Models",children:(0,o.jsx)(X,{roomId:s.id,picks:s.modelPicks,onSaved:u})}),(0,o.jsxs)(y,{id:"goals",title:"Goal events",children:[(0,o.jsx)(I,{label:"Goal events",head:["Goal","From","To","By","Reason","When"],rows:s.goalEvents.nodes.map(e=>[e.goalKey,e.fromStatus??"",e.toStatus,`${e.agent} (${e.byPane})`,e.reason,h(e.createdAt)])}),(0,o.jsx)(Z,{roomId:s.id,onDone:u})]}),(0,o.jsx)(y,{id:"guard",title:"Guard verdicts",children:f.length===0?(0,o.jsx)("p",{class:"muted small",children:"No Guard audits yet."}):(0,o.jsx)("ul",{class:"plain",children:f.map(e=>(0,o.jsxs)("li",{children:[(0,o.jsx)("strong",{children:e.verdict})," \xB7 ",h(e.createdAt),e.findings.map(l=>(0,o.jsx)("div",{class:"small",children:l})),e.edits.map(l=>(0,o.jsxs)("div",{class:"small muted",children:[l.kind," ",l.target,": ",l.detail]}))]},e.id))})}),(0,o.jsx)(y,{id:"transcripts",title:"Transcripts",children:(0,o.jsx)("div",{class:"ops-transcripts",children:[s.hostLines,s.visitorLines].map(e=>(0,o.jsxs)("div",{class:"ops-transcript","data-seat":e.seat,role:"log","aria-label":`${e.seat} pane`,children:[(0,o.jsxs)("h3",{children:[e.seat," pane"]}),e.nodes.length===0&&(0,o.jsx)("p",{class:"muted small",children:"No lines yet."}),(0,o.jsx)("ol",{class:"plain",children:[...e.nodes].reverse().map(l=>(0,o.jsxs)("li",{class:"small",children:[(0,o.jsx)("strong",{children:l.authorKind.toLowerCase()})," ",l.body]},l.id))}),e.hasNextPage&&(0,o.jsx)("p",{class:"muted small",children:"Older lines: opsRoom.transcript(before:)."})]}))})}),(0,o.jsxs)(y,{id:"memory",title:"Room memory",children:[(0,o.jsx)("pre",{class:"ops-memory small",children:JSON.stringify(s.memory,null,2)}),(0,o.jsx)(I,{label:"Memory history",head:["Path","Old","New","By","Reason","When"],rows:s.memoryHistory.nodes.map(e=>[e.path,e.oldValue==null?"":JSON.stringify(e.oldValue),e.newValue==null?"":JSON.stringify(e.newValue),e.agent,e.reason??"",h(e.createdAt)])})]}),(0,o.jsx)(y,{id:"dispatches",title:"Dispatch record",children:(0,o.jsx)(I,{label:"Dispatches",head:["From","To","Substance","Status","When"],rows:s.dispatches.nodes.map(e=>[e.fromPane,e.toPane,e.substance,e.status,h(e.createdAt)])})}),(0,o.jsx)(y,{id:"offers",title:"Offers and payments",children:(0,o.jsx)(I,{label:"Offers",head:["Stage","Version","Payments"],rows:s.offers.map(e=>[e.stage,String(e.version),e.payments.map(l=>`${l.status} ${l.total} ${l.currency}`).join("; ")])})}),(0,o.jsx)(y,{id:"flags",title:`Flags (${s.flagCount})`,children:(0,o.jsx)(I,{label:"Frustration flags",head:["Level","Evidence","When"],rows:s.flags.nodes.map(e=>[e.level,e.evidence,h(e.createdAt)])})})]})}function y(t){return(0,o.jsxs)("section",{class:"ops-section","aria-labelledby":`ops-${t.id}-h`,children:[(0,o.jsx)("h2",{id:`ops-${t.id}-h`,children:t.title}),t.children]})}function G(t){return(0,o.jsx)(I,{label:t.label,head:[t.label.replace("Spend by ",""),"Calls","Tokens in/out","Cached","Price"],rows:t.rows.map(r=>[r.key,String(r.calls),`${r.inputTokens}/${r.outputTokens}`,String(r.cachedTokens),T(r)])})}function I(t){return t.rows.length===0?(0,o.jsxs)("p",{class:"muted small",children:["None yet (",t.label.toLowerCase(),")."]}):(0,o.jsx)("div",{class:"table-scroll",role:"region","aria-label":t.label,tabIndex:0,children:(0,o.jsxs)("table",{children:[(0,o.jsx)("thead",{children:(0,o.jsx)("tr",{children:t.head.map(r=>(0,o.jsx)("th",{scope:"col",children:r}))})}),(0,o.jsx)("tbody",{children:t.rows.map(r=>(0,o.jsx)("tr",{class:t.rowClass,children:r.map(p=>(0,o.jsx)("td",{children:p}))}))})]})})}var ie=g(se()),a=g(S());function le(t){let{route:r}=t;return(0,a.jsxs)("div",{class:"ops",children:[(0,a.jsxs)("header",{class:"ops-bar",children:[(0,a.jsx)("strong",{children:"dealroom ops"}),(0,a.jsxs)("nav",{"aria-label":"Ops",children:[(0,a.jsx)(O,{href:"/ops",current:r.view==="rooms",children:"Rooms"}),(0,a.jsx)(O,{href:"/ops/prompts",current:r.view==="prompts",children:"Prompts"}),(0,a.jsx)(O,{href:"/",children:"Your rooms"})]}),(0,a.jsxs)("span",{class:"muted small",children:["@",t.me.handle]})]}),(0,a.jsx)("main",{class:"ops-main",children:r.view==="room"?(0,a.jsx)(re,{roomId:r.roomId},r.roomId):r.view==="prompts"?(0,a.jsx)(ve,{}):(0,a.jsx)(be,{})})]})}function be(){let[t,r]=(0,b.useState)({hostHandle:"",stage:"",flagged:""}),[p,i]=(0,b.useState)(null),[d,u]=(0,b.useState)(null),[s,f]=(0,b.useState)(null),[e,l]=(0,b.useState)(!1);async function x(m,v){l(!0);try{let R={first:20,after:v,filter:{hostHandle:m.hostHandle.trim().replace(/^@/,"")||null,stage:m.stage||null,flagged:m.flagged===""?null:m.flagged==="yes"}},E=(await(0,D.gql)("OpsRooms",R)).opsRooms;i(q=>v&&q?[...q,...E.nodes]:E.nodes),u(E.hasNextPage?E.endCursor:null),f(null)}catch(R){f(R)}finally{l(!1)}}(0,b.useEffect)(()=>{x(t,null)},[]);function c(m){m.preventDefault();let v=new FormData(m.target),R={hostHandle:String(v.get("hostHandle")??""),stage:String(v.get("stage")??""),flagged:String(v.get("flagged")??"")};r(R),x(R,null)}return s&&(0,D.forbidden)(s)?(0,a.jsx)(k,{error:s}):(0,a.jsxs)("section",{"aria-labelledby":"ops-rooms-h",children:[(0,a.jsx)("h1",{id:"ops-rooms-h",children:"Rooms"}),(0,a.jsxs)("form",{class:"ops-filter",onSubmit:c,"aria-label":"Filter rooms",children:[(0,a.jsxs)("label",{children:["Host handle",(0,a.jsx)("input",{name:"hostHandle",autoCapitalize:"off",placeholder:"any"})]}),(0,a.jsxs)("label",{children:["Stage",(0,a.jsxs)("select",{name:"stage",children:[(0,a.jsx)("option",{value:"",children:"Any stage"}),Object.entries(ie.STAGE_LABEL).map(([m,v])=>(0,a.jsx)("option",{value:m,children:v}))]})]}),(0,a.jsxs)("label",{children:["Flagged",(0,a.jsxs)("select",{name:"flagged",children:[(0,a.jsx)("option",{value:"",children:"Any"}),(0,a.jsx)("option",{value:"yes",children:"Flagged"}),(0,a.jsx)("option",{value:"no",children:"Not flagged"})]})]}),(0,a.jsx)("button",{type:"submit",class:"primary",disabled:e,children:"Filter"})]}),s!==null&&(0,a.jsx)(k,{error:s}),p===null?(0,a.jsx)("p",{class:"muted",children:"Loading rooms\u2026"}):p.length===0?(0,a.jsx)("p",{class:"muted",children:"No rooms match."}):(0,a.jsx)("ul",{class:"ops-rooms",children:p.map(m=>(0,a.jsxs)("li",{"data-room-id":m.id,class:"ops-room-item",children:[(0,a.jsx)(O,{href:`/ops/rooms/${m.id}`,children:m.title}),(0,a.jsxs)("span",{class:"muted small",children:["@",m.hostHandle," \xB7 ",m.kind.toLowerCase()," \xB7 ",h(m.lastActivityAt)]}),(0,a.jsxs)("span",{class:"ops-facts",children:[m.kind.toUpperCase()==="DEAL"&&(0,a.jsx)(ne.StageChip,{stage:m.stage}),(0,a.jsxs)("span",{class:"spend",children:["Spend ",T(m.totalSpend)," \xB7 ",m.totalSpend.calls," calls"]}),(0,a.jsxs)("span",{class:m.flagCount?"flags bad":"flags",children:[m.flagCount," ",m.flagCount===1?"flag":"flags"]})]})]},m.id))}),d&&(0,a.jsx)("button",{type:"button",disabled:e,onClick:()=>{x(t,d)},children:"Load more"})]})}function ve(){let[t,r]=(0,b.useState)(null),[p,i]=(0,b.useState)(null);return(0,b.useEffect)(()=>{(0,D.gql)("AgentPrompts").then(d=>r(d.agentPrompts)).catch(i)},[]),p?(0,a.jsx)(k,{error:p}):(0,a.jsxs)("section",{"aria-labelledby":"ops-prompts-h",children:[(0,a.jsx)("h1",{id:"ops-prompts-h",children:"Agent prompts"}),(0,a.jsx)("p",{class:"muted small",children:"Read-only: a prompt is code; its SHA-256 is the version that runs."}),t===null&&(0,a.jsx)("p",{class:"muted",children:"Loading prompts\u2026"}),t?.map(d=>(0,a.jsxs)("details",{class:"prompt",children:[(0,a.jsxs)("summary",{children:[(0,a.jsx)("strong",{children:d.name})," ",(0,a.jsxs)("code",{class:"sha",children:["sha256 ",d.sha256]})]}),(0,a.jsx)("pre",{"aria-label":`The ${d.name} prompt`,children:d.text})]},d.name))]})}(0,de.addDocuments)(B);window.dealroomOps={OpsApp:le};})();
