// The ops bundle's entry (assets/ops.js and ops.css, loaded by share.ts): its documents join
// the client's, and its pages are handed to the app as window.dealroomOps.
import { addDocuments } from "./gql";
import "./ops.css";
import opsDocuments from "./ops.graphql";
import { OpsApp } from "./opsapp";

addDocuments(opsDocuments);
window.dealroomOps = { OpsApp };
