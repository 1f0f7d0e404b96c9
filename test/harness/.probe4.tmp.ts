import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda } from 'agenda';
process.on('exit', (c) => console.log('exit code', c));
const agenda = new Agenda({ name: 'p', backend: new PostgresBackend({ poolConfig: { connectionString: 'postgres://u:p@127.0.0.1:1/x', max: 2 } }) });
agenda.on('error', (e) => console.log('agenda error', e.message));
setTimeout(() => console.log('still waiting for start after 3s'), 3000).unref();
try { await agenda.start(); console.log('started?'); } catch (e) { console.log('start rejected', (e as Error).message); }
