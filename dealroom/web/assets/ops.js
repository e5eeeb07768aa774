"use strict";(()=>{var pe=Object.create;var z=Object.defineProperty;var me=Object.getOwnPropertyDescriptor;var ue=Object.getOwnPropertyNames;var ge=Object.getPrototypeOf,ce=Object.prototype.hasOwnProperty;var R=(e,o)=>()=>{try{return o||e((o={exports:{}}).exports,o),o.exports}catch(d){throw o=0,d}};var fe=(e,o,d,i)=>{if(o&&typeof o=="object"||typeof o=="function")for(let l of ue(o))!ce.call(e,l)&&l!==d&&z(e,l,{get:()=>o[l],enumerable:!(i=me(o,l))||i.enumerable});return e};var g=(e,o,d)=>(d=e!=null?pe(ge(e)):{},fe(o||!e||!e.__esModule?z(d,"default",{value:e,enumerable:!0}):d,e));var A=R((ke,B)=>{B.exports=window.dealroomShared["./gql"]});var D=R((Ie,U)=>{U.exports=window.dealroomShared["preact/hooks"]});var M=R((Oe,Y)=>{Y.exports=window.dealroomShared["./offer"]});var W=R((Re,_)=>{_.exports=window.dealroomShared["./nav"]});var v=R((Ae,j)=>{j.exports=window.dealroomShared["preact/jsx-runtime"]});var se=R((He,ae)=>{ae.exports=window.dealroomShared["./types"]});var de=g(A());var K=`# The operator pages' documents (src/ops*.tsx): operators only, FORBIDDEN for anyone else.
# Validated against schema.graphql with operations.graphql by tests/test_web_documents.py.

fragment SpendFields on Spend {
  key
  calls
  inputTokens
  outputTokens
  cachedTokens
  priceUsd
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
`;var b=g(D()),E=g(A()),ne=g(M());var T=g(D()),te=g(A()),oe=g(M());var Q=g(A()),J=g(W()),S=g(v());function x(e){return(0,S.jsx)("a",{href:e.href,"aria-current":e.current?"page":void 0,onClick:o=>{o.preventDefault(),(0,J.navigate)(e.href)},children:e.children})}function k(e){if((0,Q.forbidden)(e.error))return(0,S.jsxs)("section",{class:"forbidden",role:"alert","aria-labelledby":"ops-forbidden",children:[(0,S.jsx)("h1",{id:"ops-forbidden",children:"Operators only"}),(0,S.jsx)("p",{children:"These pages are for dealroom operators. Your account is not an operator."}),(0,S.jsx)("p",{children:(0,S.jsx)("a",{href:"/",children:"Back to your rooms"})})]});let o=e.error instanceof Error?e.error.message:String(e.error);return(0,S.jsx)("p",{class:"error",role:"alert",children:o})}var P=g(D()),$=g(A());var G=["persona","distil","context_filter","offer_gen","agreement"];function C(e){let o=Number(e.priceUsd);return`$${o===0?"0":o<.01?o.toFixed(6):o.toFixed(2)}${e.unpricedCalls?` + ${e.unpricedCalls} unpriced`:""}`}var y=e=>new Date(e).toLocaleString();var n=g(v());function H(){let[e,o]=(0,P.useState)(!1),[d,i]=(0,P.useState)(null),[l,u]=(0,P.useState)("");async function s(t){o(!0),u("");try{u(await t()),i(null)}catch(m){i(m)}finally{o(!1)}}return{busy:e,run:s,status:(0,n.jsxs)(n.Fragment,{children:[d!==null&&(0,n.jsx)(k,{error:d}),l&&(0,n.jsx)("p",{class:"ok small",role:"status",children:l})]})}}var q=e=>new FormData(e.target);function X(e){let o=H();function d(i){i.preventDefault();let l=q(i),u=G.map(s=>({agent:s,model:String(l.get(s)??"").trim()}));o.run(async()=>(await(0,$.gql)("SetRoomModels",{roomId:e.roomId,picks:u}),e.onSaved(),"Models saved."))}return(0,n.jsxs)("form",{class:"ops-form",onSubmit:d,"aria-label":"Models for this room",children:[(0,n.jsx)("p",{class:"muted small",children:"A model from the price table per agent; empty uses the configured one."}),G.map(i=>(0,n.jsxs)("label",{children:[i,(0,n.jsx)("input",{name:i,defaultValue:e.picks[i]??"",placeholder:"configured",autoCapitalize:"off"})]},i)),(0,n.jsx)("button",{type:"submit",disabled:o.busy,children:"Save models"}),o.status]})}function Z(e){let o=H();function d(i){i.preventDefault();let l=q(i),u={roomId:e.roomId,key:String(l.get("key")),status:String(l.get("status")),reason:String(l.get("reason"))};o.run(async()=>{let s=await(0,$.gql)("OverrideGoal",u);e.onDone();let f=s.overrideGoal;if(!f.goalEvent)return"The goal already had that status; nothing fired.";let t=[...f.queuedRuns.map(m=>`queued ${m}`),...f.closedOffer?["closed the offer"]:[]];return`Goal set to ${f.goalEvent.toStatus}${t.length?` (${t.join(", ")})`:""}.`})}return(0,n.jsxs)("form",{class:"ops-form",onSubmit:d,"aria-label":"Override a goal",children:[(0,n.jsxs)("label",{children:["Goal",(0,n.jsx)("input",{name:"key",defaultValue:"new-offer",required:!0,autoCapitalize:"off"})]}),(0,n.jsxs)("label",{children:["Status",(0,n.jsx)("select",{name:"status",children:["open","met","blocked","abandoned"].map(i=>(0,n.jsx)("option",{value:i,children:i}))})]}),(0,n.jsxs)("label",{children:["Reason",(0,n.jsx)("input",{name:"reason",required:!0})]}),(0,n.jsx)("button",{type:"submit",disabled:o.busy,children:"Override goal"}),o.status]})}var he=["VISITOR","HOST"];function ee(e){let[o,d]=(0,P.useState)([]),i=H(),l=t=>e.takeovers.find(m=>m.seat.toUpperCase()===t),u=t=>t==="VISITOR"?"visitor":"host";function s(t,m){i.run(async()=>(await(0,$.gql)(m?"ReleasePane":"TakeOverPane",{roomId:e.roomId,seat:t}),e.onChange(),m?`The ${u(t)} pane is back with its agent.`:`You hold the ${u(t)} pane; its agent is silent.`))}function f(t,m){m.preventDefault();let w=m.target,c=String(q(m).get("body")??"").trim();c&&i.run(async()=>{let p=await(0,$.gql)("OperatorPost",{roomId:e.roomId,seat:t,body:c,clientMessageId:(0,$.newId)()});return d(h=>[...h,{...p.operatorPost,paneSeat:t}]),w.reset(),"Posted."})}return(0,n.jsxs)("div",{class:"takeover",children:[he.map(t=>{let m=l(t),w=o.filter(c=>c.paneSeat===t);return(0,n.jsxs)("div",{class:"takeover-seat","data-seat":t,children:[(0,n.jsxs)("h3",{children:["The ",u(t)," pane"]}),m?(0,n.jsxs)(n.Fragment,{children:[(0,n.jsxs)("p",{class:"small",children:["Taken over ",y(m.takenAt),": its agent is silent."]}),w.length>0&&(0,n.jsx)("ol",{class:"messages","aria-label":`Your lines in the ${u(t)} pane`,children:w.map(c=>(0,n.jsxs)("li",{"data-message-id":c.id,"data-author":c.authorKind,class:"msg left operator",children:[(0,n.jsx)("span",{class:"who",children:c.authorKind==="OPERATOR"?"Operator":c.authorKind}),(0,n.jsx)("p",{class:"body",children:c.body})]},c.id))}),(0,n.jsxs)("form",{class:"composer",onSubmit:c=>f(t,c),children:[(0,n.jsxs)("label",{class:"visually-hidden",for:`op-${t}`,children:["Say as operator in the ",u(t)," pane"]}),(0,n.jsx)("textarea",{id:`op-${t}`,name:"body",rows:2,required:!0}),(0,n.jsx)("button",{type:"submit",disabled:i.busy,children:"Post as operator"})]}),(0,n.jsxs)("button",{type:"button",disabled:i.busy,onClick:()=>s(t,!0),children:["Release the ",u(t)," pane"]})]}):(0,n.jsxs)("button",{type:"button",disabled:i.busy,onClick:()=>s(t,!1),children:["Take over the ",u(t)," pane"]})]},t)}),i.status]})}var a=g(v());function re(e){let[o,d]=(0,T.useState)(null),[i,l]=(0,T.useState)(null);async function u(){try{d(await(0,te.gql)("OpsRoom",{roomId:e.roomId})),l(null)}catch(t){l(t)}}if((0,T.useEffect)(()=>{u()},[e.roomId]),i&&!o)return(0,a.jsx)(k,{error:i});if(!o)return(0,a.jsx)("p",{class:"muted",children:"Loading the room\u2026"});let s=o.opsRoom,f=o.roomOps.guardVerdicts;return(0,a.jsxs)("article",{class:"ops-room","data-room-id":s.id,children:[(0,a.jsx)(x,{href:"/ops",children:"\u2039 Rooms"}),(0,a.jsxs)("header",{class:"ops-room-header",children:[(0,a.jsx)("h1",{children:s.title}),(0,a.jsxs)("p",{class:"muted small",children:["@",s.hostHandle," \xB7 ",s.kind.toLowerCase()," \xB7 ",s.mode.toLowerCase()," \xB7 last activity"," ",y(s.lastActivityAt)]}),s.kind.toUpperCase()==="DEAL"&&(0,a.jsx)(oe.StageChip,{stage:s.stage}),(0,a.jsxs)("p",{class:"spend",children:["Spend ",C(s.totalSpend)," \xB7 ",s.totalSpend.calls," calls \xB7 ",s.flagCount," flags"]})]}),i!==null&&(0,a.jsx)(k,{error:i}),(0,a.jsx)(I,{id:"takeover",title:"Panes",children:(0,a.jsx)(ee,{roomId:s.id,takeovers:s.takeovers,onChange:u})}),(0,a.jsx)(I,{id:"runs",title:`Runs (${s.runs.nodes.length}${s.runs.hasNextPage?"+":""})`,children:(0,a.jsx)(F,{label:"Run history",head:["Agent","Pane","Status","Verdict","Tokens in/out","Price","Latency","Refusal or error","Queued"],rows:s.runs.nodes.map(t=>[t.agent,t.pane,t.attempts>1?`${t.status} (${t.attempts} tries)`:t.status,t.verdict,`${t.usage.inputTokens}/${t.usage.outputTokens}`,C(t.usage),`${t.modelLatencyMs} ms`,t.error??"",y(t.createdAt)]),rowClass:"run-row"})}),(0,a.jsxs)(I,{id:"spend",title:"Spend",children:[(0,a.jsx)(N,{label:"Spend by agent",rows:s.byAgent}),(0,a.jsx)(N,{label:"Spend by model",rows:s.byModel}),(0,a.jsx)(N,{label:"Spend by day",rows:s.byDay})]}),(0,a.jsx)(I,{id:"models",title:"Models",children:(0,a.jsx)(X,{roomId:s.id,picks:s.modelPicks,onSaved:u})}),(0,a.jsxs)(I,{id:"goals",title:"Goal events",children:[(0,a.jsx)(F,{label:"Goal events",head:["Goal","From","To","By","Reason","When"],rows:s.goalEvents.nodes.map(t=>[t.goalKey,t.fromStatus??"",t.toStatus,`${t.agent} (${t.byPane})`,t.reason,y(t.createdAt)])}),(0,a.jsx)(Z,{roomId:s.id,onDone:u})]}),(0,a.jsx)(I,{id:"guard",title:"Guard verdicts",children:f.length===0?(0,a.jsx)("p",{class:"muted small",children:"No Guard audits yet."}):(0,a.jsx)("ul",{class:"plain",children:f.map(t=>(0,a.jsxs)("li",{children:[(0,a.jsx)("strong",{children:t.verdict})," \xB7 ",y(t.createdAt),t.findings.map(m=>(0,a.jsx)("div",{class:"small",children:m})),t.edits.map(m=>(0,a.jsxs)("div",{class:"small muted",children:[m.kind," ",m.target,": ",m.detail]}))]},t.id))})}),(0,a.jsx)(I,{id:"flags",title:`Flags (${s.flagCount})`,children:(0,a.jsx)(F,{label:"Frustration flags",head:["Level","Evidence","When"],rows:s.flags.nodes.map(t=>[t.level,t.evidence,y(t.createdAt)])})})]})}function I(e){return(0,a.jsxs)("section",{class:"ops-section","aria-labelledby":`ops-${e.id}-h`,children:[(0,a.jsx)("h2",{id:`ops-${e.id}-h`,children:e.title}),e.children]})}function N(e){return(0,a.jsx)(F,{label:e.label,head:[e.label.replace("Spend by ",""),"Calls","Tokens in/out","Cached","Price"],rows:e.rows.map(o=>[o.key,String(o.calls),`${o.inputTokens}/${o.outputTokens}`,String(o.cachedTokens),C(o)])})}function F(e){return e.rows.length===0?(0,a.jsxs)("p",{class:"muted small",children:["None yet (",e.label.toLowerCase(),")."]}):(0,a.jsx)("div",{class:"table-scroll",role:"region","aria-label":e.label,tabIndex:0,children:(0,a.jsxs)("table",{children:[(0,a.jsx)("thead",{children:(0,a.jsx)("tr",{children:e.head.map(o=>(0,a.jsx)("th",{scope:"col",children:o}))})}),(0,a.jsx)("tbody",{children:e.rows.map(o=>(0,a.jsx)("tr",{class:e.rowClass,children:o.map(d=>(0,a.jsx)("td",{children:d}))}))})]})})}var ie=g(se()),r=g(v());function le(e){let{route:o}=e;return(0,r.jsxs)("div",{class:"ops",children:[(0,r.jsxs)("header",{class:"ops-bar",children:[(0,r.jsx)("strong",{children:"dealroom ops"}),(0,r.jsxs)("nav",{"aria-label":"Ops",children:[(0,r.jsx)(x,{href:"/ops",current:o.view==="rooms",children:"Rooms"}),(0,r.jsx)(x,{href:"/ops/prompts",current:o.view==="prompts",children:"Prompts"}),(0,r.jsx)(x,{href:"/",children:"Your rooms"})]}),(0,r.jsxs)("span",{class:"muted small",children:["@",e.me.handle]})]}),(0,r.jsx)("main",{class:"ops-main",children:o.view==="room"?(0,r.jsx)(re,{roomId:o.roomId},o.roomId):o.view==="prompts"?(0,r.jsx)(ve,{}):(0,r.jsx)(ye,{})})]})}function ye(){let[e,o]=(0,b.useState)({hostHandle:"",stage:"",flagged:""}),[d,i]=(0,b.useState)(null),[l,u]=(0,b.useState)(null),[s,f]=(0,b.useState)(null),[t,m]=(0,b.useState)(!1);async function w(p,h){m(!0);try{let O={first:20,after:h,filter:{hostHandle:p.hostHandle.trim().replace(/^@/,"")||null,stage:p.stage||null,flagged:p.flagged===""?null:p.flagged==="yes"}},L=(await(0,E.gql)("OpsRooms",O)).opsRooms;i(V=>h&&V?[...V,...L.nodes]:L.nodes),u(L.hasNextPage?L.endCursor:null),f(null)}catch(O){f(O)}finally{m(!1)}}(0,b.useEffect)(()=>{w(e,null)},[]);function c(p){p.preventDefault();let h=new FormData(p.target),O={hostHandle:String(h.get("hostHandle")??""),stage:String(h.get("stage")??""),flagged:String(h.get("flagged")??"")};o(O),w(O,null)}return s&&(0,E.forbidden)(s)?(0,r.jsx)(k,{error:s}):(0,r.jsxs)("section",{"aria-labelledby":"ops-rooms-h",children:[(0,r.jsx)("h1",{id:"ops-rooms-h",children:"Rooms"}),(0,r.jsxs)("form",{class:"ops-filter",onSubmit:c,"aria-label":"Filter rooms",children:[(0,r.jsxs)("label",{children:["Host handle",(0,r.jsx)("input",{name:"hostHandle",autoCapitalize:"off",placeholder:"any"})]}),(0,r.jsxs)("label",{children:["Stage",(0,r.jsxs)("select",{name:"stage",children:[(0,r.jsx)("option",{value:"",children:"Any stage"}),Object.entries(ie.STAGE_LABEL).map(([p,h])=>(0,r.jsx)("option",{value:p,children:h}))]})]}),(0,r.jsxs)("label",{children:["Flagged",(0,r.jsxs)("select",{name:"flagged",children:[(0,r.jsx)("option",{value:"",children:"Any"}),(0,r.jsx)("option",{value:"yes",children:"Flagged"}),(0,r.jsx)("option",{value:"no",children:"Not flagged"})]})]}),(0,r.jsx)("button",{type:"submit",class:"primary",disabled:t,children:"Filter"})]}),s!==null&&(0,r.jsx)(k,{error:s}),d===null?(0,r.jsx)("p",{class:"muted",children:"Loading rooms\u2026"}):d.length===0?(0,r.jsx)("p",{class:"muted",children:"No rooms match."}):(0,r.jsx)("ul",{class:"ops-rooms",children:d.map(p=>(0,r.jsxs)("li",{"data-room-id":p.id,class:"ops-room-item",children:[(0,r.jsx)(x,{href:`/ops/rooms/${p.id}`,children:p.title}),(0,r.jsxs)("span",{class:"muted small",children:["@",p.hostHandle," \xB7 ",p.kind.toLowerCase()," \xB7 ",y(p.lastActivityAt)]}),(0,r.jsxs)("span",{class:"ops-facts",children:[p.kind.toUpperCase()==="DEAL"&&(0,r.jsx)(ne.StageChip,{stage:p.stage}),(0,r.jsxs)("span",{class:"spend",children:["Spend ",C(p.totalSpend)," \xB7 ",p.totalSpend.calls," calls"]}),(0,r.jsxs)("span",{class:p.flagCount?"flags bad":"flags",children:[p.flagCount," ",p.flagCount===1?"flag":"flags"]})]})]},p.id))}),l&&(0,r.jsx)("button",{type:"button",disabled:t,onClick:()=>{w(e,l)},children:"Load more"})]})}function ve(){let[e,o]=(0,b.useState)(null),[d,i]=(0,b.useState)(null);return(0,b.useEffect)(()=>{(0,E.gql)("AgentPrompts").then(l=>o(l.agentPrompts)).catch(i)},[]),d?(0,r.jsx)(k,{error:d}):(0,r.jsxs)("section",{"aria-labelledby":"ops-prompts-h",children:[(0,r.jsx)("h1",{id:"ops-prompts-h",children:"Agent prompts"}),(0,r.jsx)("p",{class:"muted small",children:"Read-only: a prompt is code; its SHA-256 is the version that runs."}),e===null&&(0,r.jsx)("p",{class:"muted",children:"Loading prompts\u2026"}),e?.map(l=>(0,r.jsxs)("details",{class:"prompt",children:[(0,r.jsxs)("summary",{children:[(0,r.jsx)("strong",{children:l.name})," ",(0,r.jsxs)("code",{class:"sha",children:["sha256 ",l.sha256]})]}),(0,r.jsx)("pre",{"aria-label":`The ${l.name} prompt`,children:l.text})]},l.name))]})}(0,de.addDocuments)(K);window.dealroomOps={OpsApp:le};})();
