// rpc.mjs serves the subset of Solana's JSON-RPC API that @x402/svm's client
// and facilitator call, over a LiteSVM instance. Unknown methods are logged to
// stderr and answered with JSON-RPC "method not found" so that a new call in a
// later package version shows up instead of silently misbehaving.
import {
  isAddress,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from "@solana/kit";
import { getTokenDecoder, getTokenEncoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { TransactionMetadata } from "litesvm";

const TX_ERRORS = `AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound
InsufficientFundsForFee InvalidAccountForFee AlreadyProcessed BlockhashNotFound CallChainTooDeep
MissingSignatureForFee InvalidAccountIndex SignatureFailure InvalidProgramForExecution
SanitizeFailure ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit
UnsupportedVersion InvalidWritableAccount WouldExceedMaxAccountCostLimit
WouldExceedAccountDataBlockLimit TooManyAccountLocks AddressLookupTableNotFound
InvalidAddressLookupTableOwner InvalidAddressLookupTableData InvalidAddressLookupTableIndex
InvalidRentPayingAccount WouldExceedMaxVoteCostLimit WouldExceedAccountDataTotalLimit
MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded InvalidLoadedAccountsDataSizeLimit
UnbalancedTransaction ProgramCacheHitMaxLimit CommitCancelled`.split(/\s+/);
const IX_ERRORS = `GenericError InvalidArgument InvalidInstructionData InvalidAccountData
AccountDataTooSmall InsufficientFunds IncorrectProgramId MissingRequiredSignature
AccountAlreadyInitialized UninitializedAccount UnbalancedInstruction ModifiedProgramId
ExternalAccountLamportSpend ExternalAccountDataModified ReadonlyLamportChange ReadonlyDataModified
DuplicateAccountIndex ExecutableModified RentEpochModified NotEnoughAccountKeys
AccountDataSizeChanged AccountNotExecutable AccountBorrowFailed AccountBorrowOutstanding
DuplicateAccountOutOfSync InvalidError ExecutableDataModified ExecutableLamportChange
ExecutableAccountNotRentExempt UnsupportedProgramId CallDepth MissingAccount ReentrancyNotAllowed
MaxSeedLengthExceeded InvalidSeeds InvalidRealloc ComputationalBudgetExceeded PrivilegeEscalation
ProgramEnvironmentSetupFailure ProgramFailedToComplete ProgramFailedToCompile Immutable
IncorrectAuthority AccountNotRentExempt InvalidAccountOwner ArithmeticOverflow UnsupportedSysvar
IllegalOwner MaxAccountsDataAllocationsExceeded MaxAccountsExceeded
MaxInstructionTraceLengthExceeded BuiltinProgramsMustConsumeComputeUnits BorshIoError`.split(/\s+/);

// Errors that a real validator rejects before the transaction lands, even
// with skipPreflight: the transaction never gets a status.
const REJECTED = new Set(["AlreadyProcessed", "BlockhashNotFound", "SignatureFailure",
  "SanitizeFailure", "MissingSignatureForFee", "InsufficientFundsForFee", "AccountNotFound",
  "UnsupportedVersion"]);

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// txErrorJSON renders a LiteSVM error the way Solana's RPC does:
// "BlockhashNotFound" or {"InstructionError":[2,{"Custom":1}]}.
export function txErrorJSON(err) {
  if (typeof err === "number") return TX_ERRORS[err] ?? `TransactionError${err}`;
  if (err && typeof err.index === "number" && typeof err.err === "function") {
    const ie = err.err();
    let inner;
    if (typeof ie === "number") inner = IX_ERRORS[ie] ?? `InstructionError${ie}`;
    else if (ie && typeof ie.code === "number") inner = { Custom: ie.code };
    else if (ie && typeof ie.msg === "string") inner = { BorshIoError: ie.msg };
    else inner = String(ie);
    return { InstructionError: [err.index, inner] };
  }
  if (err && typeof err.accountIndex === "number") {
    return { InsufficientFundsForRent: { account_index: err.accountIndex } };
  }
  return String(err);
}

// addr checks an address parameter, so that a bad one is the caller's
// error (-32602) and not an internal one.
function addr(a) {
  if (typeof a !== "string" || !isAddress(a)) {
    throw new RpcError(-32602, `Invalid param: ${JSON.stringify(a)} is not a base58 address`);
  }
  return a;
}

function b64ToBytes(s) {
  if (typeof s !== "string") throw new RpcError(-32602, "transaction must be a string");
  return new Uint8Array(getBase64Encoder().encode(s));
}

function decodeTx(param, encoding) {
  if (encoding && encoding !== "base64") {
    throw new RpcError(-32602, `unsupported encoding ${encoding}: use base64`);
  }
  try {
    return getTransactionDecoder().decode(b64ToBytes(param));
  } catch (e) {
    throw new RpcError(-32602, `failed to decode transaction: ${e.message}`);
  }
}

export function createRpc(chain, log) {
  const { svm } = chain;
  const b58 = getBase58Decoder();

  const slot = () => Number(svm.getClock().slot);
  const ctx = () => ({ context: { slot: slot(), apiVersion: "2.2.0" } });
  const now = () => Math.floor(Date.now() / 1000);

  // The ledger, as a validator's RPC keeps it for getSignatureStatuses,
  // getSignaturesForAddress and getTransaction: every transaction that
  // landed (with or without an error) in a block of its own, indexed by its
  // static account keys. LiteSVM's own history holds no transaction bytes.
  const history = new Map(); // base58 signature -> { slot, blockTime, err, wire, version, logs, units }
  const byAccount = new Map(); // base58 address -> [signature, ...], oldest first
  const blockTimes = new Map([[slot(), now()]]); // closed or current slot -> Unix seconds

  // land records a transaction in the current slot, which closes at this
  // time, and opens the next slot.
  function land(sig, wire, tx, err, meta) {
    const msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const s = slot();
    blockTimes.set(s, now());
    history.set(sig, { slot: s, blockTime: blockTimes.get(s), err, wire, version: msg.version,
      logs: meta.logs(), units: Number(meta.computeUnitsConsumed()) });
    for (const a of msg.staticAccounts) {
      if (!byAccount.has(a)) byAccount.set(a, []);
      byAccount.get(a).push(sig);
    }
    nextSlot();
  }

  function nextSlot() {
    svm.warpToSlot(BigInt(slot() + 1));
    blockTimes.set(slot(), now());
  }

  // Everything here is final the moment it lands, so commitment is
  // ignored; minContextSlot is honoured as a validator does.
  function checkMinContextSlot(cfg) {
    if (cfg?.minContextSlot !== undefined && cfg.minContextSlot > slot()) {
      throw new RpcError(-32016, "Minimum context slot has not been reached", { contextSlot: slot() });
    }
  }

  function accountJSON(address, encoding) {
    const acc = svm.getAccount(addr(address));
    if (!acc.exists) return null;
    const base = {
      executable: acc.executable,
      lamports: Number(acc.lamports),
      owner: acc.programAddress,
      rentEpoch: 0,
      space: acc.data.length,
    };
    if (encoding === "jsonParsed" && acc.programAddress === TOKEN_PROGRAM_ADDRESS && acc.data.length === 165) {
      const t = getTokenDecoder().decode(acc.data);
      return { ...base, data: { program: "spl-token", space: 165, parsed: { type: "account", info: {
        mint: t.mint, owner: t.owner, state: "initialized", isNative: false,
        tokenAmount: tokenAmountJSON(t.amount, decimalsOf(t.mint)),
      } } } };
    }
    if (encoding && encoding !== "base64" && encoding !== "jsonParsed") {
      throw new RpcError(-32602, `unsupported encoding ${encoding}: use base64`);
    }
    return { ...base, data: [Buffer.from(acc.data).toString("base64"), "base64"] };
  }

  function decimalsOf(mint) {
    const acc = svm.getAccount(mint);
    return acc.exists && acc.data.length >= 45 ? acc.data[44] : 0;
  }

  function tokenAmountJSON(amount, decimals) {
    const s = amount.toString().padStart(decimals + 1, "0");
    const ui = decimals ? `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, "") : s;
    return { amount: amount.toString(), decimals, uiAmount: Number(ui), uiAmountString: ui };
  }

  function simulate(tx, sigVerify) {
    // LiteSVM's signature check is a switch on the instance; the facilitator
    // simulates before it has signed (sigVerify false), so turn it off for
    // this one call only. The process is single-threaded: no call interleaves.
    svm.withSigverify(!!sigVerify);
    try {
      return svm.simulateTransaction(tx);
    } finally {
      svm.withSigverify(true);
    }
  }

  const methods = {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": "2.2.0", "feature-set": 0 }),
    getGenesisHash: () => "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
    getSlot: () => slot(),
    getBlockHeight: () => slot(),
    getLatestBlockhash: () => ({ ...ctx(), value: {
      blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot() + 150 } }),
    isBlockhashValid: ([hash]) => ({ ...ctx(), value: hash === svm.latestBlockhash() }),
    getBalance: ([a]) => ({ ...ctx(), value: Number(svm.getBalance(addr(a)) ?? 0n) }),
    getMinimumBalanceForRentExemption: ([size]) => Number(svm.minimumBalanceForRentExemption(BigInt(size ?? 0))),
    getAccountInfo: ([a, cfg]) => ({ ...ctx(), value: accountJSON(a, cfg?.encoding) }),
    getMultipleAccounts: ([addrs, cfg]) => ({ ...ctx(), value: (addrs ?? []).map((a) => accountJSON(a, cfg?.encoding)) }),
    getTokenAccountBalance: ([a]) => {
      const acc = svm.getAccount(addr(a));
      if (!acc.exists || acc.data.length !== 165) {
        throw new RpcError(-32602, "Invalid param: could not find account");
      }
      const t = getTokenDecoder().decode(acc.data);
      return { ...ctx(), value: tokenAmountJSON(t.amount, decimalsOf(t.mint)) };
    },
    simulateTransaction: ([txParam, cfg]) => {
      const tx = decodeTx(txParam, cfg?.encoding);
      const res = simulate(tx, cfg?.sigVerify);
      const failed = typeof res.err === "function";
      const meta = res.meta();
      return { ...ctx(), value: {
        err: failed ? txErrorJSON(res.err()) : null,
        logs: meta.logs(),
        accounts: null,
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        returnData: null,
        innerInstructions: cfg?.innerInstructions ? [] : null,
      } };
    },
    sendTransaction: ([txParam, cfg]) => {
      const tx = decodeTx(txParam, cfg?.encoding);
      if (!cfg?.skipPreflight) {
        const sim = simulate(tx, true);
        if (typeof sim.err === "function") {
          const err = txErrorJSON(sim.err());
          throw new RpcError(-32002, `Transaction simulation failed: ${JSON.stringify(err)}`,
            { err, logs: sim.meta().logs() });
        }
      }
      const res = svm.sendTransaction(tx);
      if (res instanceof TransactionMetadata) {
        const sig = b58.decode(res.signature());
        land(sig, txParam, tx, null, res);
        log(`landed ${sig}`);
        return sig;
      }
      const err = txErrorJSON(res.err());
      if (typeof err === "string" && REJECTED.has(err)) {
        throw new RpcError(-32002, `Transaction rejected: ${err}`, { err, logs: res.meta().logs() });
      }
      // Like a real validator with skipPreflight: the transaction is in a
      // block with its error, and getSignatureStatuses reports it.
      const sig = b58.decode(res.meta().signature());
      land(sig, txParam, tx, err, res.meta());
      log(`failed on chain ${sig}: ${JSON.stringify(err)}`);
      return sig;
    },
    // Test controls, not Solana API: they let an end-to-end test change the
    // chain between two steps (say, drain a payer between verify and settle).
    localnet_setTokenBalance: ([a, amount]) => {
      const acc = svm.getAccount(addr(a));
      if (!acc.exists || acc.data.length !== 165 || acc.programAddress !== TOKEN_PROGRAM_ADDRESS) {
        throw new RpcError(-32602, `${a} is not a token account`);
      }
      let units;
      try {
        units = BigInt(amount);
      } catch {
        throw new RpcError(-32602, `amount ${amount} is not an integer`);
      }
      if (units < 0n || units >= 1n << 64n) throw new RpcError(-32602, `amount ${amount} out of range`);
      const t = getTokenDecoder().decode(acc.data);
      const data = new Uint8Array(getTokenEncoder().encode({ ...t, amount: units }));
      svm.setAccount({ ...acc, data });
      log(`set ${a} to ${units} units`);
      return null;
    },
    localnet_expireBlockhash: () => {
      svm.expireBlockhash();
      nextSlot(); // a new blockhash comes with a new block
      return svm.latestBlockhash();
    },
    getSignatureStatuses: ([sigs]) => ({ ...ctx(), value: (sigs ?? []).map((s) => {
      const st = history.get(s);
      if (!st) return null;
      return { slot: st.slot, confirmations: null, err: st.err,
        status: st.err ? { Err: st.err } : { Ok: null }, confirmationStatus: "finalized" };
    }) }),
    getSignaturesForAddress: ([a, cfg]) => {
      const sigs = byAccount.get(addr(a)) ?? [];
      const limit = cfg?.limit ?? 1000;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        throw new RpcError(-32602, `Invalid limit ${limit}; max 1000`);
      }
      checkMinContextSlot(cfg);
      let end = sigs.length; // newest first: walk down from end - 1
      if (cfg?.before !== undefined) {
        end = sigs.lastIndexOf(cfg.before);
        if (end < 0) throw new RpcError(-32602, `Invalid param: before ${cfg.before} is not in the history`);
      }
      const stop = cfg?.until !== undefined ? sigs.lastIndexOf(cfg.until) : -1;
      const out = [];
      for (let i = end - 1; i > stop && out.length < limit; i--) {
        const h = history.get(sigs[i]);
        out.push({ signature: sigs[i], slot: h.slot, err: h.err, memo: null, blockTime: h.blockTime,
          confirmationStatus: "finalized" });
      }
      return out;
    },
    getTransaction: ([sig, cfg]) => {
      if (typeof sig !== "string") throw new RpcError(-32602, "Invalid param: signature must be a string");
      const encoding = cfg?.encoding ?? "json";
      if (encoding !== "base64") throw new RpcError(-32602, `unsupported encoding ${encoding}: use base64`);
      const h = history.get(sig);
      if (!h) return null;
      const max = cfg?.maxSupportedTransactionVersion;
      if (h.version !== "legacy" && (max === undefined || h.version > max)) {
        throw new RpcError(-32015, `Transaction version (${h.version}) is not supported by the requesting client. ` +
          `Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${h.version}`);
      }
      return { slot: h.slot, blockTime: h.blockTime, version: h.version, transaction: [h.wire, "base64"], meta: {
        err: h.err, status: h.err ? { Err: h.err } : { Ok: null }, logMessages: h.logs,
        computeUnitsConsumed: h.units, loadedAddresses: { writable: [], readonly: [] } } };
    },
    getBlockTime: ([s]) => {
      if (!Number.isInteger(s)) throw new RpcError(-32602, `Invalid param: slot ${JSON.stringify(s)}`);
      if (s === slot()) return now(); // the open block
      const t = blockTimes.get(s);
      if (t === undefined) throw new RpcError(-32004, `Block not available for slot ${s}`);
      return t;
    },
  };

  // handle answers one JSON-RPC request object.
  return function handle(req) {
    const id = req && typeof req === "object" && "id" in req ? req.id : null;
    if (!req || typeof req !== "object" || req.jsonrpc !== "2.0" || typeof req.method !== "string") {
      return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid request" } };
    }
    const fn = methods[req.method];
    if (!fn) {
      log(`unknown RPC method ${req.method} ${JSON.stringify(req.params ?? [])}`);
      return { jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${req.method}` } };
    }
    try {
      return { jsonrpc: "2.0", id, result: fn(Array.isArray(req.params) ? req.params : []) };
    } catch (e) {
      if (e instanceof RpcError) {
        return { jsonrpc: "2.0", id, error: { code: e.code, message: e.message, data: e.data } };
      }
      log(`RPC ${req.method} failed: ${e.stack ?? e}`);
      return { jsonrpc: "2.0", id, error: { code: -32603, message: `Internal error: ${e.message}` } };
    }
  };
}
