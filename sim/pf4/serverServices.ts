/**
 * The PF4 server's side services: news with bodies, the manager mailbox, the online client accounts (which come and
 * go once a second while the server runs), performance snapshots (one a minute), and backup files of accounts and
 * trades (one at start, one at every rollover). Each store is seeded from the server seed so the same seed gives the
 * same news, mail and online set.
 */
import { Random, deriveSeed } from '../world/random.js';
import { iso, WORLD_ANCHOR_MS } from '../world/people.js';
import type { PF4TradeRow, PF4UserRecord } from './pf4Records.js';
import type { Pf4World } from './pf4World.js';

export interface NewsItem {
  key: number;
  time: string;
  topic: string;
  category: string;
  keywords: string;
  priority: number;
  langId: number;
  body: string;
}

export interface MailItem {
  /** The mail's place in arrival order (1, 2, ...): what a page of `MailsRequest` is cut by. */
  key: number;
  time: string;
  senderLogin: number;
  senderName: string;
  subject: string;
  body: string;
  logins: number[];
}

export interface PerformanceSnapshot {
  ctm: string;
  users: number;
  cpu: number;
  freeMem: number;
  network: number;
  sockets: number;
}

export interface BackupFile {
  file: string;
  mode: 'full' | 'archive';
  time: number;
  users: readonly PF4UserRecord[];
  trades: readonly PF4TradeRow[];
}

const TOPICS = [
  ['Central bank holds rates steady', 'Economy', 'rates,central bank'],
  ['Euro edges higher after inflation data', 'Forex', 'EURUSD,inflation'],
  ['Gold retreats from weekly high', 'Metals', 'XAUUSD'],
  ['Oil inventories fall more than expected', 'Energy', 'USOIL,inventories'],
  ['Equity indices open mixed', 'Indices', 'US30,GER40'],
  ['Yen weakens as yields climb', 'Forex', 'USDJPY,yields'],
  ['Crypto volumes pick up', 'Crypto', 'BTCUSD,ETHUSD'],
  ['Trading hours change for the holiday', 'Announcements', 'holiday,schedule'],
] as const;

/** News items the server keeps: the oldest leaves (a `news` delete) when a new one would pass the bound. */
export const NEWS_KEPT = 1_000;
/**
 * Mails the server keeps, the newest by arrival; each account's mailbox holds those of them addressed to it, so the
 * oldest mail leaves every mailbox with it.
 */
export const MAILS_KEPT = 1_000;

const PERFORMANCE_EVERY_MS = 60_000;
const PERFORMANCE_KEPT = 24 * 60;
const ONLINE_SHARE = 0.05;

export class Pf4Services {
  readonly news: NewsItem[] = [];
  /** The kept mails, oldest first. */
  readonly mails: MailItem[] = [];
  /** Each account's mailbox: the kept mails addressed to it, oldest first (an account no mail reached has none). */
  private readonly mailboxes = new Map<number, MailItem[]>();
  readonly online = new Set<number>();
  readonly performance: PerformanceSnapshot[] = [];
  readonly backups: BackupFile[] = [];
  private readonly onlineRandom: Random;
  private timers: NodeJS.Timeout[] = [];
  private nextNewsKey = 1;
  private nextMailKey = 1;
  private lastCpu = process.cpuUsage();
  private lastCpuAt = Date.now();

  constructor(
    private readonly world: Pf4World,
    seed: number,
  ) {
    const random = new Random(deriveSeed(seed, 'news'));
    for (let i = 0; i < 20; i++) {
      const [topic, category, keywords] = random.pick(TOPICS);
      this.news.push({
        key: this.nextNewsKey++,
        time: iso(WORLD_ANCHOR_MS - (20 - i) * 3_600_000),
        topic,
        category,
        keywords,
        priority: random.chance(0.2) ? 1 : 0,
        langId: 0,
        body: `${topic}. Simulated market commentary number ${i + 1} for demonstration purposes only.`,
      });
    }
    this.mails.push({
      key: this.nextMailKey++,
      time: iso(WORLD_ANCHOR_MS),
      senderLogin: 0,
      senderName: 'Server',
      subject: 'Welcome',
      body: 'The simulated trading server is running.',
      logins: [],
    });
    this.onlineRandom = new Random(deriveSeed(seed, 'online'));
    for (const login of world.users.keys()) if (this.onlineRandom.chance(ONLINE_SHARE)) this.online.add(login);
    // A day of history at one snapshot a minute before the anchor, so PerformanceRequest has something to page.
    const perf = new Random(deriveSeed(seed, 'performance'));
    for (let i = 60; i > 0; i--) {
      this.performance.push({
        ctm: iso(WORLD_ANCHOR_MS - i * PERFORMANCE_EVERY_MS),
        users: perf.int(0, 50),
        cpu: perf.int(1, 30),
        freeMem: perf.int(2000, 4000),
        network: perf.int(10, 500),
        sockets: perf.int(5, 80),
      });
    }
    this.takeBackup('full', WORLD_ANCHOR_MS);
    this.takeBackup('archive', WORLD_ANCHOR_MS + 3_600_000);
  }

  start(): void {
    if (this.timers.length > 0) return;
    this.snapshotPerformance();
    const perf = setInterval(() => this.snapshotPerformance(), PERFORMANCE_EVERY_MS);
    const online = setInterval(() => this.churnOnline(), 1000);
    perf.unref();
    online.unref();
    this.timers = [perf, online];
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  addNews(item: Omit<NewsItem, 'key' | 'time' | 'langId'>): NewsItem {
    const news: NewsItem = { ...item, key: this.nextNewsKey++, time: iso(Date.now()), langId: 0 };
    this.news.push(news);
    this.world.emit('news', 'add', topicOf(news));
    while (this.news.length > NEWS_KEPT)
      this.world.emit('news', 'delete', { key: (this.news.shift() as NewsItem).key });
    return news;
  }

  /** Delivers one mail to each of its logins' mailboxes (the caller has checked they exist and collapsed duplicates). */
  addMail(mail: Omit<MailItem, 'time' | 'key'>): MailItem {
    const item: MailItem = { ...mail, key: this.nextMailKey++, time: iso(Date.now()) };
    this.mails.push(item);
    for (const login of item.logins) {
      const box = this.mailboxes.get(login);
      if (box) box.push(item);
      else this.mailboxes.set(login, [item]);
    }
    while (this.mails.length > MAILS_KEPT) this.dropMail(this.mails.shift() as MailItem);
    this.world.emit('mail', 'add', {
      time: item.time,
      senderLogin: item.senderLogin,
      senderName: item.senderName,
      subject: item.subject,
      body: item.body,
    });
    return item;
  }

  /** An account's mailbox, newest first. */
  mailbox(login: number): MailItem[] {
    return [...(this.mailboxes.get(login) ?? [])].reverse();
  }

  /** The oldest mail leaves the mailboxes too: it is the first of each that holds it. */
  private dropMail(item: MailItem): void {
    for (const login of item.logins) {
      const box = this.mailboxes.get(login);
      if (box?.[0] === item) box.shift();
      if (box?.length === 0) this.mailboxes.delete(login);
    }
  }

  /** One client logs in or out; the broker's online cache follows through events. */
  churnOnline(): void {
    const logins = this.world.users.keys();
    if (logins.length === 0) return;
    const login = this.onlineRandom.pick(logins);
    if (this.online.delete(login)) {
      this.world.emit('online', 'delete', { login });
    } else {
      this.online.add(login);
      this.world.emit('online', 'add', { login, group: this.world.users.get(login)?.group ?? '' });
    }
  }

  /** The online list `{login, group}` by login, as OnlineRequest and the resync carry it. */
  onlineRecords(): Array<{ login: number; group: string }> {
    return [...this.online]
      .sort((a, b) => a - b)
      .map((login) => ({ login, group: this.world.users.get(login)?.group ?? '' }));
  }

  takeBackup(mode: BackupFile['mode'], time: number): BackupFile {
    const stamp = new Date(time).toISOString().replace(/[-:]/g, '').slice(0, 13);
    const backup: BackupFile = {
      file: `${mode}-${stamp}.bak`,
      mode,
      time,
      users: this.world.users.values(),
      trades: this.world.trades.values(),
    };
    this.backups.push(backup);
    // Backup files keep references to immutable records, so only the newest few are kept to bound memory.
    const ofMode = this.backups.filter((b) => b.mode === mode);
    if (ofMode.length > 7) this.backups.splice(this.backups.indexOf(ofMode[0]), 1);
    return backup;
  }

  private snapshotPerformance(): void {
    const now = Date.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const elapsedMs = Math.max(1, now - this.lastCpuAt);
    this.lastCpu = process.cpuUsage();
    this.lastCpuAt = now;
    const mem = process.memoryUsage();
    this.performance.push({
      ctm: iso(now),
      users: this.online.size,
      cpu: Math.min(100, Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100)),
      freeMem: Math.max(0, Math.round((mem.heapTotal - mem.heapUsed) / 1024 / 1024)),
      network: 0,
      sockets: this.online.size,
    });
    if (this.performance.length > PERFORMANCE_KEPT)
      this.performance.splice(0, this.performance.length - PERFORMANCE_KEPT);
  }
}

/** A news item without its body, as headers travel. */
export function topicOf(news: NewsItem): Omit<NewsItem, 'body'> {
  const { body: _body, ...topic } = news;
  return topic;
}
