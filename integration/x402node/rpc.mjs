// rpc.mjs serves the subset of Solana's JSON-RPC API that @x402/svm's client
// and facilitator call, over a LiteSVM instance. Unknown methods are logged to
// stderr and answered with JSON-RPC "method not found" so that a new call in a
// later package version shows up instead of silently misbehaving.
import {
  isAddress,
  getBase58Decoder,
  getBase64Encoder,
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
  const statuses = new Map(); // base58 signature -> { slot, err }
  const b58 = getBase58Decoder();

  const slot = () => Number(svm.getClock().slot);
  const ctx = () => ({ context: { slot: slot(), apiVersion: "2.2.0" } });

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
        statuses.set(sig, { slot: slot(), err: null });
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
      statuses.set(sig, { slot: slot(), err });
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
      return svm.latestBlockhash();
    },
    getSignatureStatuses: ([sigs]) => ({ ...ctx(), value: (sigs ?? []).map((s) => {
      const st = statuses.get(s);
      if (!st) return null;
      return { slot: st.slot, confirmations: null, err: st.err,
        status: st.err ? { Err: st.err } : { Ok: null }, confirmationStatus: "finalized" };
    }) }),
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
